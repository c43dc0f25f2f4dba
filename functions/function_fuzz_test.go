package functions

import (
	"bytes"
	"context"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/render"
)

// FuzzRun: the KRM function never panics, answers the same input the same
// way, and whatever it prints is a ResourceList: on success always, and
// on failure when it prints anything (kyaml's framework prints nothing
// when it cannot read its input at all); a failure it prints carries an
// error result.
//
// Component sources resolve in an empty repository root: nothing outside
// it is read. More seeds are in testdata/fuzz/FuzzRun.
func FuzzRun(f *testing.F) {
	f.Add([]byte(resourceList))
	f.Add([]byte(resourceList + "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data: {platform: openshift, wave: \"3\"}\n"))
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		run := func() ([]byte, error) {
			var out bytes.Buffer
			err := Run(context.Background(), bytes.NewReader(data), &out, render.Options{Engines: engines.Dialects(), Generators: builtin.Registry(), Root: root})
			return out.Bytes(), err
		}
		out, err := run()
		again, err2 := run()
		if !bytes.Equal(out, again) || (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("two runs of one input differ:\n%s\nerror %v\n---- second:\n%s\nerror %v", out, err, again, err2)
		}
		if err != nil && len(out) == 0 {
			return
		}
		// kyaml reads it as kpt would, without expanding aliases.
		rl, perr := yaml.Parse(string(out))
		if perr != nil || rl.GetKind() != "ResourceList" || rl.GetApiVersion() == "" {
			t.Fatalf("the output is not a ResourceList (%v; run error %v):\n%s", perr, err, out)
		}
		if err != nil {
			results, _ := rl.Pipe(yaml.Lookup("results"))
			errs := 0
			if results != nil {
				elems, _ := results.Elements()
				for _, r := range elems {
					if s, _ := r.GetString("severity"); s == "error" {
						errs++
					}
				}
			}
			if errs == 0 {
				t.Fatalf("a failure without an error result (%v):\n%s", err, out)
			}
		}
	})
}
