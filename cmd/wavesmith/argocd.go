package main

// Argo CD config management plugin mode. Argo CD runs 'wavesmith render .'
// in the application folder inside its cmp-server sidecar and hands it the
// application's settings as environment variables:
//
//   - ARGOCD_APP_PARAMETERS, a JSON array of {name, string|array|map}: the
//     plugin parameters set on the Application (spec.source.plugin.parameters);
//   - ARGOCD_ENV_<NAME>: the entries of spec.source.plugin.env;
//   - ARGOCD_APP_NAME, ARGOCD_APP_NAMESPACE, KUBE_VERSION, KUBE_API_VERSIONS.
//
// The parameters below are named like the flags they default; explicit flags
// win over ARGOCD_APP_PARAMETERS, which wins over ARGOCD_ENV_*, which wins
// over the built-in defaults. Discovery ('wavesmith discover') tells the
// cmp-server whether a folder is wavesmith's.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	designerv1alpha1 "github.com/wavesmith/wavesmith/api/designer/v1alpha1"
	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/manifest"
	"github.com/wavesmith/wavesmith/render"
)

// Environment variables of Argo CD's config management plugins.
const (
	envAppName       = "ARGOCD_APP_NAME"
	envAppParameters = "ARGOCD_APP_PARAMETERS"
	envPrefix        = "ARGOCD_ENV_"
)

// pluginParameters are the flags Argo CD may set, by name: the
// ARGOCD_APP_PARAMETERS entry and the flag share the name, the
// ARGOCD_ENV_ variable is its upper-case form (see envVar).
var pluginParameters = []string{"platform", "dialects", "wave", "adoption-policy", "update-policy", "delete-policy", "reconcile-policy"}

// envVar is the ARGOCD_ENV_ variable of a plugin parameter:
// update-policy -> ARGOCD_ENV_UPDATE_POLICY.
func envVar(param string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(param, "-", "_"))
}

// argocdHelp is the part of a flag's help that names its Argo CD sources.
func argocdHelp(param string) string {
	return fmt.Sprintf(" (Argo CD: parameter %q in ARGOCD_APP_PARAMETERS, else env %s)", param, envVar(param))
}

// setting is a value for a flag and where it came from, for messages.
type setting struct{ value, source string }

// appParameter is one entry of ARGOCD_APP_PARAMETERS.
type appParameter struct {
	Name   string             `json:"name"`
	String *string            `json:"string,omitempty"`
	Array  *[]string          `json:"array,omitempty"`
	Map    *map[string]string `json:"map,omitempty"`
}

// argocdSettings reads the plugin parameters from ARGOCD_APP_PARAMETERS and
// ARGOCD_ENV_*, the former winning. Empty values count as unset (Argo CD
// passes empty env entries too). Each value is checked here, so that a
// mistake names the variable it came from.
func argocdSettings(getenv func(string) string) (map[string]setting, error) {
	out := map[string]setting{}
	for _, p := range pluginParameters {
		if v := getenv(envVar(p)); v != "" {
			out[p] = setting{value: v, source: envVar(p)}
		}
	}
	params, err := parseAppParameters(getenv(envAppParameters))
	if err != nil {
		return nil, err
	}
	for p, v := range params {
		out[p] = v
	}
	for _, p := range pluginParameters {
		s, ok := out[p]
		if !ok {
			continue
		}
		if err := checkSetting(p, s.value); err != nil {
			return nil, fmt.Errorf("%s: %w", s.source, err)
		}
	}
	return out, nil
}

// parseAppParameters decodes ARGOCD_APP_PARAMETERS. Unknown names, names
// given twice and values of the wrong type are errors; only dialects may be
// an array (joined with commas).
func parseAppParameters(s string) (map[string]setting, error) {
	out := map[string]setting{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	var params []appParameter
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&params); err != nil {
		return nil, fmt.Errorf("%s: malformed JSON (want an array of {name, string|array|map}): %w", envAppParameters, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: malformed JSON: data after the array", envAppParameters)
	}
	seen := map[string]bool{}
	for i, p := range params {
		src := fmt.Sprintf("%s parameter %q", envAppParameters, p.Name)
		switch {
		case p.Name == "":
			return nil, fmt.Errorf("%s: entry %d has no name", envAppParameters, i)
		case !isPluginParameter(p.Name):
			return nil, fmt.Errorf("%s: unknown parameter %q (known: %s)", envAppParameters, p.Name, strings.Join(pluginParameters, ", "))
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
		case p.Array != nil && p.Name == "dialects":
			v = strings.Join(*p.Array, ",")
		case p.Array != nil:
			return nil, fmt.Errorf("%s: want a string, not an array", src)
		}
		if v != "" {
			out[p.Name] = setting{value: v, source: src}
		}
	}
	return out, nil
}

func isPluginParameter(name string) bool {
	for _, p := range pluginParameters {
		if p == name {
			return true
		}
	}
	return false
}

// checkSetting validates one value with the engine's own rules.
func checkSetting(param, v string) error {
	var cfg v1alpha1.RenderConfigSpec
	switch param {
	case "platform":
		cfg.Platform = v
	case "dialects":
		cfg.Dialects = []string{v}
	case "wave":
		w, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || w < -32768 || w > 32767 {
			return fmt.Errorf("wave %q: want an integer in -32768..32767", v)
		}
		w32 := int32(w)
		cfg.Wave = &w32
	case "adoption-policy":
		cfg.Policies = &v1alpha1.Policies{Adoption: v}
	case "update-policy":
		cfg.Policies = &v1alpha1.Policies{Update: v}
	case "delete-policy":
		cfg.Policies = &v1alpha1.Policies{Delete: v}
	case "reconcile-policy":
		cfg.Policies = &v1alpha1.Policies{Reconcile: v}
	}
	_, err := render.OptionsFromConfig(cfg)
	return err
}

// applyArgoCD sets the flags the user did not give from Argo CD's
// environment.
func (f *renderFlags) applyArgoCD(c *cobra.Command) error {
	settings, err := argocdSettings(os.Getenv)
	if err != nil {
		return err
	}
	for _, p := range pluginParameters {
		s, ok := settings[p]
		fl := c.Flags().Lookup(p)
		if !ok || fl == nil || fl.Changed {
			continue
		}
		if err := c.Flags().Set(p, strings.TrimSpace(s.value)); err != nil {
			return fmt.Errorf("%s: %w", s.source, err)
		}
	}
	return nil
}

// argocdRoot is the checkout Argo CD handed the plugin: the current folder
// (the application's) less ARGOCD_APP_SOURCE_PATH, its path in the
// repository. The cmp-server's copy of the repository may lack .git (a
// --plugin-tar-exclude), so the git root cannot be relied on. It returns ""
// outside Argo CD or when the current folder does not end in the source
// path.
func argocdRoot() string {
	src := os.Getenv("ARGOCD_APP_SOURCE_PATH")
	if src == "" {
		return ""
	}
	cwd, err := os.Getwd()
	if err != nil {
		return ""
	}
	rel := filepath.Clean(filepath.FromSlash(src))
	switch {
	case rel == ".":
		return cwd
	case filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)):
		return ""
	case strings.HasSuffix(cwd, string(filepath.Separator)+rel):
		return strings.TrimSuffix(cwd, string(filepath.Separator)+rel)
	}
	return ""
}

// argocdStderr returns w, or, under Argo CD (ARGOCD_APP_NAME set), a
// writer that starts every line with "wavesmith (argocd app NAME): ", so
// that messages in the repo-server's log and the UI name the application.
func argocdStderr(w io.Writer) io.Writer {
	app := os.Getenv(envAppName)
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
	var buf bytes.Buffer
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if p.atStart {
			buf.Write(p.prefix)
		}
		buf.Write(line)
		p.atStart = line[len(line)-1] == '\n'
	}
	if _, err := p.w.Write(buf.Bytes()); err != nil {
		return 0, err
	}
	return len(b), nil
}

// discoveryMarker marks a folder as wavesmith's even without specs (the
// content is not read).
const discoveryMarker = ".wavesmith.yaml"

func newDiscoverCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "discover [DIR]...",
		Short: "Print the files that make folders wavesmith's (Argo CD plugin discovery)",
		Long: `Discover prints, one a line, the files that make each folder (default ".")
wavesmith's: a ` + discoveryMarker + ` marker in it, and every *.yaml, *.yml or *.json
file below it (hidden folders aside) that holds a Kaoto or a Component, even
one that does not parse, so that the render reports the mistake rather than
another tool taking the folder. It prints nothing when there is none.

It is the discover.find.command of the Argo CD plugin (kustomize/argocd):
Argo CD takes a folder when the command exits 0 and prints something.`,
		Example: `  wavesmith discover apps/shop`,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				args = []string{"."}
			}
			for _, dir := range args {
				files, err := discover(dir)
				if err != nil {
					return err
				}
				for _, p := range files {
					fmt.Fprintln(c.OutOrStdout(), p)
				}
			}
			return nil
		},
	}
}

// Textual fallback for files that do not parse: a broken spec still makes
// the folder wavesmith's, so that the render reports the mistake rather
// than another tool taking the folder.
var (
	specAPIVersion = regexp.MustCompile(`["']?\bapiVersion["']?\s*:\s*["']?(` + regexp.QuoteMeta(designerv1alpha1.Group) + `|` + regexp.QuoteMeta(v1alpha1.Group) + `)/`)
	specKind       = regexp.MustCompile(`["']?\bkind["']?\s*:\s*["']?(` + designerv1alpha1.Kind + `|` + v1alpha1.ComponentKind + `)\b`)
)

// discover lists the marker in dir and the files under dir that render
// would load (render.Files) holding a Kaoto or a Component.
func discover(dir string) ([]string, error) {
	var found []string
	if _, err := os.Stat(filepath.Join(dir, discoveryMarker)); err == nil {
		found = append(found, filepath.Join(dir, discoveryMarker))
	}
	files, err := render.Files(dir)
	if err != nil {
		return nil, fmt.Errorf("discovering specs in %s: %w", dir, err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("discovering specs in %s: %w", dir, err)
		}
		if holdsSpec(p, b) {
			found = append(found, p)
		}
	}
	return found, nil
}

// holdsSpec tells whether a file holds a Kaoto or a Component.
func holdsSpec(file string, b []byte) bool {
	objs, err := manifest.Decode(file, b)
	if err != nil {
		return specAPIVersion.Match(b) && specKind.Match(b)
	}
	for _, o := range objs {
		switch o.Group() + "/" + o.Kind() {
		case designerv1alpha1.Group + "/" + designerv1alpha1.Kind, v1alpha1.Group + "/" + v1alpha1.ComponentKind:
			return true
		}
	}
	return false
}
