package kaoto

// SharedParts returns the parts every Kaoto's children share, and the
// same parts built anew, by name: TestSharedPartsStayUnchanged compares
// them after rendering.
func SharedParts() (inUse, fresh map[string]any) {
	inUse, fresh = shared.byName(), newParts().byName()
	inUse["specLabels"] = specLabels
	fresh["specLabels"] = map[string]string{
		"app.kubernetes.io/name":      appName,
		"app.kubernetes.io/component": componentName,
		"app.kubernetes.io/part-of":   appName,
	}
	return inUse, fresh
}

func (p parts) byName() map[string]any {
	return map[string]any{
		"servicePorts": p.servicePorts, "env": p.env, "containerPorts": p.containerPorts,
		"backendPort": p.backendPort, "probe": p.probe, "resources": p.resources,
		"containerSecurity": p.containerSecurity, "podSecurity": p.podSecurity,
	}
}

// MapSetsMade counts the sets of children's own maps made so far
// (ownMaps): a render that releases them makes few.
func MapSetsMade() int64 { return made.Load() }

// OwnMaps is a set of a Kaoto's own maps (ownMaps), for tests.
type OwnMaps = ownMaps

// TakeMaps takes a set as Generate does, with the Release of its Kaoto.
func TakeMaps() (*OwnMaps, func()) {
	o := takeMaps()
	return o, o.releaser()
}

// Lend lends the set to the next Kaoto, as takeMaps does when the pool
// hands it out again, and returns that Kaoto's Release.
func Lend(o *OwnMaps) func() { return o.releaser() }

// Map takes a map of the set.
func (o *ownMaps) Map() map[string]any { return o.m() }
