// Package v1alpha1 holds the Go types of designer.kaoto.io/v1alpha1 Kaoto, the
// same JSON shape as the Kaoto operator's CRD, so that existing Kaoto
// resources render unchanged.
package v1alpha1
