package inventory

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func order(n int) *int { return &n }

func TestFormatParse(t *testing.T) {
	cm := Entry{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "settings"}
	crb := Entry{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding", Name: "system:shop"}
	pre := Entry{Group: "batch", Version: "v1", Kind: "Job", Namespace: "shop", Name: "migrate", Hook: HookPreInstall, PurgeOrder: order(-5)}
	post := Entry{Group: "batch", Version: "v1", Kind: "Job", Namespace: "shop", Name: "smoke", Hook: "post-install,pre-install"}
	purged := Entry{Version: "v1", Kind: "Pod", Namespace: "shop", Name: "probe", PurgeOrder: order(0)}
	// A name that sorts after "migrate" only when the attributes do not
	// take part in the order of objects.
	migrate2 := Entry{Group: "batch", Version: "v1", Kind: "Job", Namespace: "shop", Name: "migrate-2"}
	cases := map[string]struct {
		reason  string
		entries []Entry
		want    string
	}{
		"Empty": {"no children: an empty value", nil, ""},
		"OldForm": {"entries without attributes: the line of earlier releases",
			[]Entry{cm, crb}, "/v1/ConfigMap/shop/settings\nrbac.authorization.k8s.io/v1/ClusterRoleBinding//system:shop"},
		"Attributes": {"hook= then purge-order=, space-separated after the object",
			[]Entry{purged, post, pre},
			"/v1/Pod/shop/probe purge-order=0\nbatch/v1/Job/shop/migrate hook=pre-install purge-order=-5\nbatch/v1/Job/shop/smoke hook=post-install,pre-install"},
		"SortedByObject": {"objects sort by their name, attributes aside",
			[]Entry{migrate2, pre},
			"batch/v1/Job/shop/migrate hook=pre-install purge-order=-5\nbatch/v1/Job/shop/migrate-2"},
		"Deduplicated": {"an entry given twice is written once",
			[]Entry{pre, cm, pre, cm}, "/v1/ConfigMap/shop/settings\nbatch/v1/Job/shop/migrate hook=pre-install purge-order=-5"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Format(tc.entries)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("%s: Format -want +got:\n%s", tc.reason, diff)
			}
			// Any input order gives the same value.
			rev := append([]Entry(nil), tc.entries...)
			for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
				rev[i], rev[j] = rev[j], rev[i]
			}
			if again := Format(rev); again != got {
				t.Errorf("%s: Format depends on the input order:\n%s\n%s", tc.reason, got, again)
			}
			parsed, err := Parse(got)
			if err != nil {
				t.Fatalf("%s: Parse(Format()): %v", tc.reason, err)
			}
			if diff := cmp.Diff(got, Format(parsed)); diff != "" {
				t.Errorf("%s: Format(Parse(v)) differs from v:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestParse(t *testing.T) {
	cases := map[string]struct {
		reason  string
		value   string
		want    []Entry
		wantErr error
	}{
		"OldForm": {"the format of earlier releases, with blank lines and spaces around",
			"  /v1/Service/demo/k\n\napps/v1/Deployment/demo/k  \n",
			[]Entry{{Version: "v1", Kind: "Service", Namespace: "demo", Name: "k"}, {Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "demo", Name: "k"}}, nil},
		"DeleteHook": {"a delete hook",
			"batch/v1/Job/shop/cleanup hook=pre-delete",
			[]Entry{{Group: "batch", Version: "v1", Kind: "Job", Namespace: "shop", Name: "cleanup", Hook: HookPreDelete}}, nil},
		"Hook": {"a hook",
			"batch/v1/Job/shop/smoke hook=post-install",
			[]Entry{{Group: "batch", Version: "v1", Kind: "Job", Namespace: "shop", Name: "smoke", Hook: HookPostInstall}}, nil},
		"AttributesAnyOrder": {"purge-order= may come first",
			"batch/v1/Job/shop/migrate purge-order=32767 hook=pre-install,post-install",
			[]Entry{{Group: "batch", Version: "v1", Kind: "Job", Namespace: "shop", Name: "migrate", Hook: "pre-install,post-install", PurgeOrder: order(32767)}}, nil},
		"ClusterScoped": {"an empty namespace",
			"rbac.authorization.k8s.io/v1/ClusterRole//view purge-order=-32768",
			[]Entry{{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "view", PurgeOrder: order(-32768)}}, nil},
		"SameTwice": {"an entry listed twice alike is kept once",
			"/v1/Pod/a/p purge-order=1\n/v1/Pod/a/p purge-order=1",
			[]Entry{{Version: "v1", Kind: "Pod", Namespace: "a", Name: "p", PurgeOrder: order(1)}}, nil},
		"Empty":        {"an empty value", "", nil, nil},
		"FourParts":    {"a slash missing", "v1/Service/demo/k", nil, ErrMalformed},
		"SixParts":     {"a slash too many", "apps/v1/Deployment/demo/k/x", nil, ErrMalformed},
		"NoKind":       {"an empty Kind", "/v1//demo/k", nil, ErrMalformed},
		"NoName":       {"an empty name", "/v1/Service/demo/", nil, ErrMalformed},
		"NoVersion":    {"an empty version", "//Service/demo/k", nil, ErrMalformed},
		"NotKeyValue":  {"an attribute without =", "/v1/Pod/a/p hook", nil, ErrMalformed},
		"DoubleSpace":  {"two spaces make an empty attribute", "/v1/Pod/a/p  hook=pre-install", nil, ErrMalformed},
		"EmptyKey":     {"=value", "/v1/Pod/a/p =1", nil, ErrMalformed},
		"Unknown":      {"an attribute this release does not know", "/v1/Pod/a/p weight=5", nil, ErrUnknownAttribute},
		"UnknownCase":  {"keys are case-sensitive", "/v1/Pod/a/p Hook=pre-install", nil, ErrUnknownAttribute},
		"BadHook":      {"a Helm hook the renderer does not keep", "/v1/Pod/a/p hook=pre-upgrade", nil, ErrInvalidAttribute},
		"EmptyHook":    {"hook= without a value", "/v1/Pod/a/p hook=", nil, ErrInvalidAttribute},
		"HookTwice":    {"a hook value listed twice", "/v1/Pod/a/p hook=pre-install,pre-install", nil, ErrInvalidAttribute},
		"HookSpaces":   {"a space ends the attribute: hook=pre-install, is refused", "/v1/Pod/a/p hook=pre-install, post-install", nil, ErrInvalidAttribute},
		"AttrTwice":    {"an attribute given twice", "/v1/Pod/a/p purge-order=1 purge-order=2", nil, ErrInvalidAttribute},
		"BadOrder":     {"purge-order not an integer", "/v1/Pod/a/p purge-order=last", nil, ErrInvalidAttribute},
		"OrderTooBig":  {"purge-order out of range", "/v1/Pod/a/p purge-order=32768", nil, ErrInvalidAttribute},
		"Conflict":     {"one object with different attributes", "/v1/Pod/a/p purge-order=1\n/v1/Pod/a/p", nil, ErrConflict},
		"LaterLineBad": {"a bad line after good ones fails the whole value", "/v1/Pod/a/p\n/v1/Pod/a/q x=y", nil, ErrUnknownAttribute},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Parse(tc.value)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("%s: Parse(%q) error %v, want %v", tc.reason, tc.value, err, tc.wantErr)
			}
			if err != nil {
				// The error names the line it refuses.
				if line := tc.value[strings.LastIndex(tc.value, "\n")+1:]; !strings.Contains(err.Error(), line) {
					t.Errorf("%s: error %q does not name the line %q", tc.reason, err, line)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestEntry(t *testing.T) {
	e := Entry{Group: "batch", Version: "v1", Kind: "Job", Namespace: "shop", Name: "migrate", Hook: HookPreInstall, PurgeOrder: order(2)}
	got := map[string]any{
		"String":     e.String(),
		"Line":       e.Line(),
		"APIVersion": e.APIVersion(),
		"Transient":  e.Transient(),
		"CoreAPI":    Entry{Version: "v1", Kind: "Pod", Name: "p"}.APIVersion(),
		"Plain":      Entry{Version: "v1", Kind: "Pod", Name: "p"}.Transient(),
		"HookOnly":   Entry{Version: "v1", Kind: "Pod", Name: "p", Hook: HookPostInstall}.Transient(),
		"PurgeOnly":  Entry{Version: "v1", Kind: "Pod", Name: "p", PurgeOrder: order(0)}.Transient(),
	}
	want := map[string]any{
		"String":     "batch/v1/Job/shop/migrate",
		"Line":       "batch/v1/Job/shop/migrate hook=pre-install purge-order=2",
		"APIVersion": "batch/v1",
		"Transient":  true,
		"CoreAPI":    "v1",
		"Plain":      false,
		"HookOnly":   true,
		"PurgeOnly":  true,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}

func TestParseOrder(t *testing.T) {
	cases := map[string]struct {
		reason  string
		value   string
		want    int
		wantErr bool
	}{
		"Zero":      {"zero", "0", 0, false},
		"Negative":  {"a negative order", "-10", -10, false},
		"Plus":      {"a leading plus sign", "+3", 3, false},
		"Max":       {"the largest int16", "32767", 32767, false},
		"Min":       {"the smallest int16", "-32768", -32768, false},
		"AboveMax":  {"one above the range", "32768", 0, true},
		"BelowMin":  {"one below the range", "-32769", 0, true},
		"Empty":     {"no value", "", 0, true},
		"Fraction":  {"not an integer", "1.5", 0, true},
		"Spaces":    {"spaces are not trimmed", " 1", 0, true},
		"Hex":       {"only decimal", "0x10", 0, true},
		"Word":      {"a word", "first", 0, true},
		"HugeValue": {"far out of range", "99999999999999999999", 0, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseOrder(tc.value)
			if (err != nil) != tc.wantErr {
				t.Fatalf("%s: ParseOrder(%q) error %v, want error %v", tc.reason, tc.value, err, tc.wantErr)
			}
			if err != nil {
				if !strings.Contains(err.Error(), "-32768..32767") {
					t.Errorf("%s: error %q does not give the range", tc.reason, err)
				}
				return
			}
			if got != tc.want {
				t.Errorf("%s: ParseOrder(%q) = %d, want %d", tc.reason, tc.value, got, tc.want)
			}
		})
	}
}

func TestValidateHook(t *testing.T) {
	for _, v := range []string{"pre-install", "post-install", "pre-install,post-install", "post-install,pre-install", "pre-delete", "post-delete", "post-delete,pre-install"} {
		if err := ValidateHook(v); err != nil {
			t.Errorf("ValidateHook(%q): %v", v, err)
		}
	}
	for _, v := range []string{"", "pre-upgrade", "pre-install,", ",post-install", "PRE-INSTALL", "pre-install;post-install"} {
		if err := ValidateHook(v); !errors.Is(err, ErrInvalidAttribute) {
			t.Errorf("ValidateHook(%q): %v, want ErrInvalidAttribute", v, err)
		}
	}
}

func TestDeleteOnly(t *testing.T) {
	for v, want := range map[string]bool{
		"": false, "pre-install": false, "pre-delete": true, "post-delete": true,
		"post-delete,pre-delete": true, "pre-delete,pre-install": false, "post-install,post-delete": false,
	} {
		if got := DeleteOnly(v); got != want {
			t.Errorf("DeleteOnly(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestPolicyValue: CamelCase policy values read as the kebab-case ones.
func TestPolicyValue(t *testing.T) {
	for in, want := range map[string]string{
		"IfUnowned": "if-unowned", "if-unowned": "if-unowned", "Recreate": "recreate",
		"OnObjectOrComponentChange": "on-object-or-component-change", "never": "never", "": "",
	} {
		if got := PolicyValue(in); got != want {
			t.Errorf("PolicyValue(%q) = %q, want %q", in, got, want)
		}
	}
}
