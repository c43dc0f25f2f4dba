package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wavesmith/wavesmith/config"
)

// TestUnknownCommandSuggests: a mistyped command is a usage error that
// suggests the command meant; an unrelated word suggests nothing.
func TestUnknownCommandSuggests(t *testing.T) {
	for _, tc := range []struct{ arg, want string }{
		{"rendr", `error: unknown command "rendr": did you mean render?` + "\n"},
		{"chek", `error: unknown command "chek": did you mean check?` + "\n"},
		{"verison", `error: unknown command "verison": did you mean version?` + "\n"},
		{"zzz", `error: unknown command "zzz"` + "\n"},
	} {
		code, out, stderr := wavesmith(t, "", tc.arg)
		if want := tc.want + "Run 'wavesmith --help' for usage.\n"; code != exitUsage || out != "" || stderr != want {
			t.Errorf("wavesmith %s: exit %d, stdout %q, stderr %q; want exit 2, stderr %q", tc.arg, code, out, stderr, want)
		}
	}
}

// TestVersionFormat: version takes --format as render does; -o stays as
// a deprecated alias, said on stderr, never in the JSON on stdout.
func TestVersionFormat(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		code       int
		json       bool
		stderrWant string
	}{
		{args: []string{"version", "--format", "json"}, json: true},
		{args: []string{"version", "-o", "json"}, json: true, stderrWant: "warning: version -o is deprecated: use --format (as render --format)\n"},
		{args: []string{"version", "--output", "json", "--format", "json"}, json: true, stderrWant: "warning: version -o is deprecated"},
		{args: []string{"version", "--format", "json", "-o", "text"}, code: exitUsage, stderrWant: `error: --format "json" and -o "text" disagree: give --format alone`},
		{args: []string{"version", "--format", "yaml"}, code: exitUsage, stderrWant: `error: --format "yaml": want text or json`},
		{args: []string{"version"}, stderrWant: ""},
	} {
		code, out, stderr := wavesmith(t, "", tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.stderrWant) || tc.stderrWant == "" && stderr != "" {
			t.Errorf("%v: exit %d, stderr %q; want exit %d, stderr with %q", tc.args, code, stderr, tc.code, tc.stderrWant)
		}
		if tc.json {
			var v map[string]string
			if err := json.Unmarshal([]byte(out), &v); err != nil || v["wavesmith"] == "" {
				t.Errorf("%v: stdout is not the version as JSON (%v):\n%s", tc.args, err, out)
			}
		}
	}
	_, help, _ := wavesmith(t, "", "version", "--help")
	if !strings.Contains(help, "--format") || strings.Contains(help, "--output") {
		t.Errorf("version --help offers -o, or no --format:\n%s", help)
	}
}

// TestHelpIsItsOwn: check's and fn's help speak of check and fn, not of
// the commands their text was once copied from.
func TestHelpIsItsOwn(t *testing.T) {
	_, check, _ := wavesmith(t, "", "check", "--help")
	_, fn, _ := wavesmith(t, "", "fn", "--help")
	_, render, _ := wavesmith(t, "", "render", "--help")
	for _, tc := range []struct {
		cmd, help string
		want, not []string
	}{
		{"check", check,
			[]string{"Exit codes: 0 DIR is up to date; 1 DIR is stale", "the record of DIR", "The tree holds _flux/"},
			[]string{"differences for diff", "Also write", "nothing is written"}},
		{"fn", fn,
			[]string{"Settings come from, highest first: flags; the functionConfig; defaults.", "Exit codes: 0 no error result", "no project file is read"},
			[]string{"Argo CD: parameter", "differences for diff", "stale tree", "--verbose", "--quiet", "found from the current folder"}},
		{"render", render,
			[]string{"Exit codes: 0 success; 1 bad input", `(Argo CD: parameter "wave", else env ARGOCD_ENV_WAVE)`},
			[]string{"differences for diff", "stale tree"}},
	} {
		for _, s := range tc.want {
			if !strings.Contains(tc.help, s) {
				t.Errorf("%s --help lacks %q", tc.cmd, s)
			}
		}
		for _, s := range tc.not {
			if strings.Contains(tc.help, s) {
				t.Errorf("%s --help holds %q, another command's text", tc.cmd, s)
			}
		}
	}
	// fn's help lists every ConfigMap key of the table of settings.
	for _, s := range config.Settings {
		if s.Takes(config.ConfigMap) && !strings.Contains(fn, s.Key) {
			t.Errorf("fn --help does not name the ConfigMap key %s", s.Key)
		}
	}
}

// TestFlagsFromSettings: every rendering command has the flag of each
// setting of its doors, with the table's help; flags given set the
// setting at its path (config.Settings is the one table).
func TestFlagsFromSettings(t *testing.T) {
	root := newRootCommand(strings.NewReader(""), &strings.Builder{}, &strings.Builder{})
	for _, name := range []string{"render", "check", "graph", "diff", "fn"} {
		c, _, err := root.Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		tree := name == "render" || name == "check"
		for _, s := range config.Settings {
			fl := c.Flags().Lookup(s.Flag)
			want := s.Takes(config.Flags) || tree && s.Takes(config.TreeFlags)
			if (fl != nil) != want {
				t.Errorf("%s: flag --%s bound %v, want %v", name, s.Flag, fl != nil, want)
				continue
			}
			if fl != nil && !strings.HasPrefix(fl.Usage, strings.TrimSuffix(s.Help, ".")) {
				t.Errorf("%s --%s: help %q is not the table's", name, s.Flag, fl.Usage)
			}
		}
	}
	c, _, _ := root.Find([]string{"render"})
	if err := c.ParseFlags([]string{"--wave=3", "--dialects", "argocd", "--update-policy", "replace", "--flux-name", "x", "-n", "demo"}); err != nil {
		t.Fatal(err)
	}
	l := flagLayer(c)
	got := map[string]string{}
	for _, s := range config.Settings {
		if v := s.Get(&l.Spec); v != "" {
			got[s.Path] = v
		}
	}
	want := map[string]string{"wave": "3", "dialects": "argocd", "policies.update": "replace", "flux": "true", "flux.name": "x", "namespace": "demo"}
	if len(got) != len(want) {
		t.Errorf("flag layer %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("flag layer %s = %q, want %q", k, got[k], v)
		}
	}
	if err := c.ParseFlags([]string{"--wave=soon"}); err == nil || !strings.Contains(err.Error(), `"soon": want an integer`) {
		t.Errorf("--wave=soon: %v", err)
	}
}
