package helm

import (
	"encoding/base64"
	"errors"
	"path"
	"strings"
	"text/template"

	"github.com/gobwas/glob"
	"helm.sh/helm/v3/pkg/chart"

	"github.com/wavesmith/wavesmith/internal/tmplsandbox"
)

// helmFuncs are the functions Helm's engine adds to the sandbox's
// (tmplsandbox.Funcs), with the behaviour of Helm v3.22.0's (lookup
// finds nothing and getHostByName answers "", as in helm template).
func helmFuncs() template.FuncMap {
	return template.FuncMap{
		"required": func(warn string, v any) (any, error) {
			if s, ok := v.(string); v == nil || (ok && s == "") {
				return v, errors.New(warn)
			}
			return v, nil
		},
		"fail":          func(msg string) (string, error) { return "", errors.New(msg) },
		"lookup":        func(string, string, string, string) (map[string]any, error) { return map[string]any{}, nil },
		"getHostByName": func(string) string { return "" },
	}
}

// files is .Files as Helm offers it.
type files map[string][]byte

func newFiles(from []*chart.File) files {
	f := files{}
	for _, e := range from {
		f[e.Name] = e.Data
	}
	return f
}

// GetBytes returns a file's content, empty when there is none.
func (f files) GetBytes(name string) []byte {
	if v, ok := f[name]; ok {
		return v
	}
	return []byte{}
}

// Get returns a file's content as a string.
func (f files) Get(name string) string { return string(f.GetBytes(name)) }

// Glob returns the files whose names match pattern.
func (f files) Glob(pattern string) files {
	g, err := glob.Compile(pattern, '/')
	if err != nil {
		g, _ = glob.Compile("**")
	}
	out := files{}
	for name, data := range f {
		if g.Match(name) {
			out[name] = data
		}
	}
	return out
}

// AsConfig returns the files as ConfigMap data.
func (f files) AsConfig() string {
	if f == nil {
		return ""
	}
	m := map[string]string{}
	for k, v := range f {
		m[path.Base(k)] = string(v)
	}
	return tmplsandbox.ToYAML(m)
}

// AsSecrets returns the files as Secret data.
func (f files) AsSecrets() string {
	if f == nil {
		return ""
	}
	m := map[string]string{}
	for k, v := range f {
		m[path.Base(k)] = base64.StdEncoding.EncodeToString(v)
	}
	return tmplsandbox.ToYAML(m)
}

// Lines returns a file's lines.
func (f files) Lines(name string) []string {
	if f == nil || len(f[name]) == 0 {
		return []string{}
	}
	return strings.Split(strings.TrimSuffix(string(f[name]), "\n"), "\n")
}
