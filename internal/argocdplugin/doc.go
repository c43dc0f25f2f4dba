// Package argocdplugin is wavesmith's door for Argo CD's config management
// plugins (v2, a sidecar of argocd-repo-server). Argo CD runs `wavesmith
// render` in the application folder and hands it the Application's
// settings as environment variables:
//
//   - ARGOCD_APP_PARAMETERS, a JSON array of {name, string|array|map}: the
//     plugin parameters of the Application (spec.source.plugin.parameters);
//   - ARGOCD_ENV_<NAME>: the entries of spec.source.plugin.env;
//   - ARGOCD_APP_NAME, ARGOCD_APP_NAMESPACE, ARGOCD_APP_SOURCE_PATH,
//     KUBE_VERSION, KUBE_API_VERSIONS.
//
// The parameters are the rows of config.Settings that take config.ArgoCD
// (Parameters); kustomize/argocd/plugin.yaml announces the same, a test
// in package config keeps them in step. Layers turns them into
// configuration layers (package config):
// parameters win over env entries, which win over the project file; the
// environment Argo CD describes the cluster with comes below the project
// file. Parameters and env entries are read only under Argo CD
// (ARGOCD_APP_NAME set, Active); there an unknown ARGOCD_ENV_ name is an
// error (CheckEnv), and Root, the checkout, is an error when the working
// folder does not end in ARGOCD_APP_SOURCE_PATH. Discover tells the plugin
// server whether a folder is wavesmith's. Charts gives the render a
// context under which charts the lock names and the cache lacks are
// fetched (the repo-server has network); elsewhere renders stay offline.
package argocdplugin
