package argocdplugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/config"
)

// Environment variables of Argo CD's config management plugins.
const (
	EnvAppName       = "ARGOCD_APP_NAME"
	EnvAppNamespace  = "ARGOCD_APP_NAMESPACE"
	EnvAppParameters = "ARGOCD_APP_PARAMETERS"
	EnvSourcePath    = "ARGOCD_APP_SOURCE_PATH"
	EnvPrefix        = "ARGOCD_ENV_"
	EnvKubeVersion   = "KUBE_VERSION"
	EnvAPIVersions   = "KUBE_API_VERSIONS"
)

// Parameter is a plugin parameter: its name and the configuration field
// it sets.
type Parameter struct{ Name, Field string }

// Parameters are the settings an Application may give, named like the CLI
// flags they default: the settings of config.Settings that come through
// config.ArgoCD, in the table's order.
var Parameters = parameters()

func parameters() []Parameter {
	var ps []Parameter
	for _, s := range config.Settings {
		if s.Takes(config.ArgoCD) {
			ps = append(ps, Parameter{Name: s.Param, Field: s.Path})
		}
	}
	return ps
}

// EnvVar is the ARGOCD_ENV_ variable of a parameter:
// update-policy -> ARGOCD_ENV_UPDATE_POLICY.
func EnvVar(param string) string { return config.EnvVar(param) }

func parameterField(name string) string { p, _ := parameter(name); return p.Field }

func parameter(name string) (Parameter, bool) {
	for _, p := range Parameters {
		if p.Name == name {
			return p, true
		}
	}
	return Parameter{}, false
}

// appParameter is one entry of ARGOCD_APP_PARAMETERS.
type appParameter struct {
	Name   string             `json:"name"`
	String *string            `json:"string,omitempty"`
	Array  *[]string          `json:"array,omitempty"`
	Map    *map[string]string `json:"map,omitempty"`
}

// Active reports whether wavesmith runs as Argo CD's plugin: ARGOCD_APP_NAME
// is set. Only then are the Application's parameters and env entries read,
// and objects always go to standard output.
func Active(getenv func(string) string) bool { return getenv(EnvAppName) != "" }

// Layers returns, highest precedence first, the configuration layers of
// Argo CD's environment (getenv): the Application's parameters, its env
// entries (both only under Argo CD, see Active: outside it a stray
// ARGOCD_ENV_WAVE is no setting), and (lowest, under the project file)
// what Argo CD says about the cluster: ARGOCD_APP_NAMESPACE,
// KUBE_VERSION, KUBE_API_VERSIONS. Malformed parameters are errors naming
// the variable.
func Layers(getenv func(string) string) (params, env, cluster config.Layer, err error) {
	params = config.Layer{Name: EnvAppParameters}
	env = config.Layer{Name: "ARGOCD_ENV_*"}
	if !Active(getenv) {
		all := getenv
		getenv = func(k string) string {
			if k == EnvAppParameters || strings.HasPrefix(k, EnvPrefix) {
				return ""
			}
			return all(k)
		}
	}
	values, err := parseAppParameters(getenv(EnvAppParameters))
	if err != nil {
		return params, env, cluster, err
	}
	for _, p := range Parameters {
		if v, ok := values[p.Name]; ok {
			if err := set(&params.Spec, p, v); err != nil {
				return params, env, cluster, fmt.Errorf("%s parameter %q: %w", EnvAppParameters, p.Name, err)
			}
		}
	}
	params.FieldName = namer(func(p Parameter) string { return fmt.Sprintf("%s parameter %q", EnvAppParameters, p.Name) })

	for _, p := range Parameters {
		if v := strings.TrimSpace(getenv(EnvVar(p.Name))); v != "" {
			if err := set(&env.Spec, p, v); err != nil {
				return params, env, cluster, fmt.Errorf("%s: %w", EnvVar(p.Name), err)
			}
		}
	}
	env.FieldName = namer(func(p Parameter) string { return EnvVar(p.Name) })

	cluster = config.Layer{Name: "Argo CD's environment", Spec: v1alpha1.RenderConfigSpec{
		Namespace: getenv(EnvAppNamespace), KubeVersion: getenv(EnvKubeVersion), APIVersions: config.SplitList(getenv(EnvAPIVersions)),
	}}
	cluster.FieldName = func(path string) string {
		return map[string]string{"namespace": EnvAppNamespace, "kubeVersion": EnvKubeVersion, "apiVersions": EnvAPIVersions}[path]
	}
	return params, env, cluster, nil
}

func namer(name func(Parameter) string) func(string) string {
	return func(path string) string {
		for _, p := range Parameters {
			if p.Field == path {
				return name(p)
			}
		}
		return ""
	}
}

// set writes a parameter's value into spec (checked later by
// config.Merged.Options, which names where it came from).
func set(spec *v1alpha1.RenderConfigSpec, p Parameter, v string) error {
	return config.Lookup(p.Field).Set(spec, v)
}

// parseAppParameters decodes ARGOCD_APP_PARAMETERS. Unknown names, names
// given twice and values of the wrong type are errors; only dialects may be
// an array (joined with commas). Empty values count as unset (Argo CD
// passes empty entries too).
func parseAppParameters(s string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	var params []appParameter
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&params); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			err = fmt.Errorf("got a JSON %s where %s wants an array of objects", te.Value, te.Field)
			if te.Field == "" {
				err = fmt.Errorf("got a JSON %s", te.Value)
			}
		}
		return nil, fmt.Errorf("%s: malformed JSON (want an array of {name, string|array|map}): %w", EnvAppParameters, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: malformed JSON: data after the array", EnvAppParameters)
	}
	seen := map[string]bool{}
	var known []string
	for _, p := range Parameters {
		known = append(known, p.Name)
	}
	for i, p := range params {
		src := fmt.Sprintf("%s parameter %q", EnvAppParameters, p.Name)
		_, isKnown := parameter(p.Name)
		switch {
		case p.Name == "":
			return nil, fmt.Errorf("%s: entry %d has no name", EnvAppParameters, i)
		case !isKnown:
			return nil, fmt.Errorf("%s: unknown parameter %q (known: %s)", EnvAppParameters, p.Name, strings.Join(known, ", "))
		case seen[p.Name]:
			return nil, fmt.Errorf("%s: given twice", src)
		case p.Map != nil:
			return nil, fmt.Errorf("%s: want a string, not a map", src)
		case p.String != nil && p.Array != nil:
			return nil, fmt.Errorf("%s: both string and array given", src)
		}
		seen[p.Name] = true
		var v string
		switch {
		case p.String != nil:
			v = *p.String
		case p.Array != nil && config.Lookup(parameterField(p.Name)).Type == config.List:
			v = strings.Join(*p.Array, ",")
		case p.Array != nil:
			return nil, fmt.Errorf("%s: want a string, not an array", src)
		}
		if strings.TrimSpace(v) != "" {
			out[p.Name] = v
		}
	}
	return out, nil
}

// ErrEnv: Argo CD's environment is inconsistent (a source path the
// working folder does not end in, an unknown ARGOCD_ENV_ variable).
var ErrEnv = errors.New("invalid Argo CD environment")

// Root is the checkout Argo CD handed the plugin: cwd (the door's working
// folder, the application's, absolute) less ARGOCD_APP_SOURCE_PATH, its
// path in the repository. The plugin server's copy of the repository may
// lack .git, so the git root cannot be relied on. It returns "" outside
// Argo CD (see Active), and ErrEnv when the source path is missing,
// leaves the repository, or is not what cwd ends in: the root never falls
// back to a guess there.
func Root(getenv func(string) string, cwd string) (string, error) {
	if !Active(getenv) {
		return "", nil
	}
	src := getenv(EnvSourcePath)
	if src == "" {
		return "", fmt.Errorf("%w: %s is not set: the checkout (the root nothing is read outside of) cannot be known", ErrEnv, EnvSourcePath)
	}
	if !filepath.IsAbs(cwd) {
		return "", fmt.Errorf("%w: the working folder %q is not absolute", ErrEnv, cwd)
	}
	rel := filepath.Clean(filepath.FromSlash(src))
	switch {
	case rel == ".":
		return cwd, nil
	case filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)):
		return "", fmt.Errorf("%w: %s=%q is not a path inside the repository", ErrEnv, EnvSourcePath, src)
	case strings.HasSuffix(cwd, string(filepath.Separator)+rel):
		return strings.TrimSuffix(cwd, string(filepath.Separator)+rel), nil
	}
	return "", fmt.Errorf("%w: %s=%q, but the working folder %s does not end in it", ErrEnv, EnvSourcePath, src, cwd)
}

// CheckEnv refuses, under Argo CD (see Active), an ARGOCD_ENV_ variable of
// environ that names no parameter: a typo (ARGOCD_ENV_UPDATE_POLICIY) is
// an error as a typo'd parameter is, never a setting silently ignored.
func CheckEnv(environ []string) error {
	vars := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	if vars[EnvAppName] == "" {
		return nil
	}
	known := map[string]bool{}
	var names []string
	for _, p := range Parameters {
		known[EnvVar(p.Name)] = true
		names = append(names, EnvVar(p.Name))
	}
	var unknown []string
	for k := range vars {
		if strings.HasPrefix(k, EnvPrefix) && !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return fmt.Errorf("%w: unknown env entry %s (known: %s)", ErrEnv, strings.Join(unknown, ", "), strings.Join(names, ", "))
}

// Stderr returns w, or, under Argo CD (ARGOCD_APP_NAME set), a writer that
// starts every line with "wavesmith (argocd app NAME): ", so that messages
// in the repo-server's log and the UI name the application.
func Stderr(w io.Writer, getenv func(string) string) io.Writer {
	app := getenv(EnvAppName)
	if app == "" {
		return w
	}
	return &prefixWriter{w: w, prefix: []byte(fmt.Sprintf("wavesmith (argocd app %s): ", app)), atStart: true}
}

// prefixWriter writes prefix at the start of every line.
type prefixWriter struct {
	w       io.Writer
	prefix  []byte
	atStart bool
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	n := len(b)
	var buf []byte
	for len(b) > 0 {
		i := strings.IndexByte(string(b), '\n')
		line := b
		if i >= 0 {
			line = b[:i+1]
		}
		if p.atStart {
			buf = append(buf, p.prefix...)
		}
		buf = append(buf, line...)
		p.atStart = line[len(line)-1] == '\n'
		b = b[len(line):]
	}
	if _, err := p.w.Write(buf); err != nil {
		return 0, err
	}
	return n, nil
}
