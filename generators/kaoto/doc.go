// Package kaoto generates the children of a designer.kaoto.io/v1alpha1
// Kaoto: a Service, an Ingress (Kubernetes) or Route (OpenShift) when
// spec.ingress is set, and a Deployment, equal field for field to the
// bodies the Kaoto operator applies, without ownerReferences.
//
// Like the operator, generation is a list of steps (service, expose,
// deploy) chosen once per platform. The children of all Kaotos share
// their constant parts below metadata (probes, ports, env, resources,
// security contexts): a caller copies a child before changing those.
package kaoto
