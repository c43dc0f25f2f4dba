package kaoto

// SharedParts returns the parts every Kaoto's children share, and the
// same parts built anew, by name: TestSharedPartsStayUnchanged compares
// them after rendering.
func SharedParts() (inUse, fresh map[string]any) {
	return shared.byName(), newParts().byName()
}

func (p parts) byName() map[string]any {
	return map[string]any{
		"servicePorts": p.servicePorts, "env": p.env, "containerPorts": p.containerPorts,
		"backendPort": p.backendPort, "probe": p.probe, "resources": p.resources,
		"containerSecurity": p.containerSecurity, "podSecurity": p.podSecurity,
	}
}
