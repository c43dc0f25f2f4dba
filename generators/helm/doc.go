// Package helm renders a Component whose source is a Helm chart with the
// Helm v3 SDK (chart loader, values coalescing and schema validation, the
// template engine, manifest sorting and hook parsing), the way helm
// template does, and translates hooks into waves and policies as
// component-operator-runtime does.
package helm
