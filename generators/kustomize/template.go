package kustomize

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"

	"github.com/wavesmith/wavesmith/generators/component"
	"github.com/wavesmith/wavesmith/internal/tmplsandbox"
	"github.com/wavesmith/wavesmith/manifest"
)

// noValue is what text/template prints for a nil value; it is removed
// from the output, as Helm does. (A missing key is an error.)
var noValue = []byte("<no value>")

// templates returns the paths of the files that are templates: every
// file without a suffix configured (except files that are not UTF-8),
// else the files ending in it.
func templates(files map[string][]byte, suffix string) []string {
	var names []string
	for p, b := range files {
		if suffix != "" && !strings.HasSuffix(p, suffix) {
			continue
		}
		if suffix == "" && !utf8.Valid(b) {
			continue
		}
		names = append(names, p)
	}
	sort.Strings(names)
	return names
}

// render executes the templates of the folder as one associated set (a
// define in any file is visible in all) with .Values as data, and
// replaces them by their output, named without the template suffix. A
// missing map key is an error (missingkey=error). Execution is bounded
// by the budget and ctx.
func (j *job) render(ctx context.Context, t *tree, cfg config) error {
	files := t.mem
	names := templates(files, cfg.TemplateSuffix)
	if len(names) == 0 {
		return nil
	}
	suffix := cfg.TemplateSuffix
	t.origin = map[string]string{}
	for _, n := range names {
		out := strings.TrimSuffix(n, suffix)
		if out == "" || strings.HasSuffix(out, "/") {
			return j.fileError(n, 0, "", fmt.Errorf("%w: the file name is only the template suffix %q", ErrTemplate, suffix))
		}
		if _, clash := files[out]; clash && out != n {
			return j.fileError(n, 0, "", fmt.Errorf("%w: renders to %s, which exists too", ErrTemplate, out))
		}
		if out != n {
			t.origin[out] = n
		}
	}
	left, right := cfg.LeftTemplateDelimiter, cfg.RightTemplateDelimiter
	if left == "" {
		left = "{{"
	}
	if right == "" {
		right = "}}"
	}
	b := tmplsandbox.New(ctx, tmplsandbox.Default)
	set := template.New("").Delims(left, right).Option("missingkey=error")
	fm, err := j.funcs(set, b)
	if err != nil {
		return err
	}
	set.Funcs(fm)
	for _, n := range names {
		if _, err := set.New(n).Parse(string(files[n])); err != nil {
			return j.templateError(n, names, b, err)
		}
	}
	b.Instrument(set)
	// ConfigFile's values are the defaults (as in component-operator-runtime).
	data := map[string]any{"Values": component.Merge(cfg.Values, j.values)}
	out := make(map[string][]byte, len(files))
	for p, c := range files {
		out[p] = c
	}
	for _, n := range names {
		w := b.File()
		if err := set.ExecuteTemplate(w, n, data); err != nil {
			return j.templateError(n, names, b, err)
		}
		rendered := bytes.ReplaceAll(w.Bytes(), noValue, nil)
		delete(out, n)
		name := strings.TrimSuffix(n, suffix)
		out[name] = rendered
		if err := j.checkYAML(n, name, rendered); err != nil {
			return err
		}
	}
	t.setMem(out)
	return nil
}

// checkYAML reports a rendered YAML or JSON file that does not parse,
// naming the template and the failing line of its output.
func (j *job) checkYAML(tmpl, name string, out []byte) error {
	switch path.Ext(name) {
	case ".yaml", ".yml", ".json":
	default:
		return nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			msg := strings.TrimPrefix(err.Error(), "yaml: ")
			if m := yamlLine.FindStringSubmatch(msg); m != nil {
				l, _ := strconv.Atoi(m[1])
				if lines := strings.Split(string(out), "\n"); l >= 1 && l <= len(lines) {
					msg = fmt.Sprintf("%s (output line %d: %q)", msg[len(m[0]):], l, lines[l-1])
				}
			}
			return j.fileError(tmpl, 0, "", fmt.Errorf("%w: renders invalid YAML: %w: %s", ErrTemplate, manifest.ErrSyntax, msg))
		}
	}
}

var (
	yamlLine = regexp.MustCompile(`^line (\d+): `)
	// tmplLoc finds "template: NAME:LINE" in text/template's messages.
	tmplLoc = regexp.MustCompile(`template: ([^:\n]+):(\d+)(?::\d+)?: `)
)

// templateError locates a text/template error at the innermost template
// file and line its message names (an error inside an include names the
// file holding the define), and wraps it in ErrTemplate.
func (j *job) templateError(name string, names []string, b *tmplsandbox.Budget, err error) error {
	msg := err.Error()
	file, line := name, 0
	known := make(map[string]bool, len(names))
	for _, n := range names {
		known[n] = true
	}
	locs := tmplLoc.FindAllStringSubmatchIndex(msg, -1)
	for i := len(locs) - 1; i >= 0; i-- {
		m := locs[i]
		if n := msg[m[2]:m[3]]; known[n] {
			file = n
			line, _ = strconv.Atoi(msg[m[4]:m[5]])
			if i == 0 && m[0] == 0 {
				msg = msg[m[1]:] // File and Line say where
			}
			break
		}
	}
	if b.Err() != nil && errors.Is(err, ErrBudget) {
		// The limit says what happened, the mark that hit it (a range
		// or a template) where; text/template's call chain does not
		// help.
		msg = b.Err().Error()
		if f, l, ok := splitLocation(b.Where()); ok && known[f] {
			file, line = f, l
		}
		if file != name {
			msg = fmt.Sprintf("%s (rendering %s)", msg, name)
		}
	}
	return j.fileError(file, line, "", fmt.Errorf("%w: %w", ErrTemplate, &wrapped{msg: msg, err: err}))
}

// splitLocation splits text/template's "file:line:column".
func splitLocation(loc string) (string, int, bool) {
	i := strings.LastIndexByte(loc, ':')
	if i < 0 {
		return "", 0, false
	}
	j := strings.LastIndexByte(loc[:i], ':')
	if j < 0 {
		return "", 0, false
	}
	line, err := strconv.Atoi(loc[j+1 : i])
	return loc[:j], line, err == nil
}

// wrapped shows msg and unwraps to err.
type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }
