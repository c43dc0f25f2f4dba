package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTreeFlags(t *testing.T) {
	cases := map[string]struct {
		reason string
		args   []string
		code   int
		stderr string
		files  []string // present in the tree when the exit is 0
	}{
		"Flux": {
			reason: "--flux adds one Kustomization per wave and a list of them",
			args:   []string{"--flux", "--tree-path", "clusters/prod"}, code: exitOK,
			files: []string{"_flux/kustomization.yaml", "_flux/wave-0.yaml", "_flux/wave-0/kustomization.yaml", "_flux/wave-m200.yaml"},
		},
		"ArgoCD": {
			reason: "--argocd adds the root Application (an app of apps: the examples' shop depends on widgets)",
			args:   []string{"--argocd", "--argocd-repo", "https://git.example.com/p.git", "--tree-path", "clusters/prod"}, code: exitOK,
			files: []string{"_argocd/wavesmith.yaml", "_argocd/apps/wavesmith-operators-component-shop.yaml"},
		},
		"ArgoCDWithoutRepo": {
			reason: "an Application needs the repository URL",
			args:   []string{"--argocd", "--tree-path", "x"}, code: exitUsage, stderr: "--argocd-repo: is required",
		},
		"OutsideRepository": {
			reason: "without --tree-path, a tree outside any git repository has no path for Flux: say so",
			args:   []string{"--flux"}, code: exitUsage, stderr: "is not inside a git repository: give its path inside the repository with --tree-path",
		},
		"FluxFlagAlone": {
			reason: "a --flux-* flag without --flux is a mistake",
			args:   []string{"--flux-source", "GitRepository/apps"}, code: exitUsage, stderr: "--flux-* flags need --flux",
		},
		"ArgoFlagAlone": {
			reason: "an --argocd-* flag without --argocd is a mistake",
			args:   []string{"--argocd-repo", "https://x"}, code: exitUsage, stderr: "--argocd-* flags need --argocd",
		},
		"TreePathAlone": {
			reason: "--tree-path without an engine is a mistake",
			args:   []string{"--tree-path", "x"}, code: exitUsage, stderr: "--tree-path needs --flux or --argocd",
		},
		"BadSource": {
			reason: "a source reference without a kind",
			args:   []string{"--flux", "--tree-path", "x", "--flux-source", "flux-system"}, code: exitUsage, stderr: `--flux-source: "flux-system": want KIND/NAME`,
		},
		"BadInterval": {
			reason: "an interval that is no duration",
			args:   []string{"--flux", "--tree-path", "x", "--flux-interval", "often"}, code: exitUsage, stderr: `--flux-interval: "often": want a positive duration`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tree")
			code, _, stderr := wavesmith(t, "", append([]string{"render", "-q", examples, "-o", dir}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("%s: exit %d, want %d; stderr: %s", tc.reason, code, tc.code, stderr)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("%s: stderr %q lacks %q", tc.reason, stderr, tc.stderr)
			}
			if code != exitOK {
				if _, err := os.Stat(dir); !os.IsNotExist(err) {
					t.Errorf("%s: a failed render wrote %s", tc.reason, dir)
				}
				return
			}
			for _, f := range tc.files {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("%s: %v", tc.reason, err)
				}
			}
			// check with the same flags accepts what render wrote.
			if code, out, stderr := wavesmith(t, "", append([]string{"check", "-q", examples, "-o", dir}, tc.args...)...); code != exitOK {
				t.Errorf("%s: check after render: exit %d\n%s%s", tc.reason, code, out, stderr)
			}
		})
	}
}

func TestFluxNeedsATree(t *testing.T) {
	code, out, stderr := wavesmith(t, "", "render", examples, "--flux")
	if code != exitUsage || out != "" || !strings.Contains(stderr, "give -o DIR") {
		t.Errorf("render --flux to stdout: exit %d, stdout %d bytes, stderr %q", code, len(out), stderr)
	}
}
