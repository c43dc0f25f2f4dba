package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/generators"
	"github.com/wavesmith/wavesmith/gitops/engines"
)

// SplitList splits a comma-separated list, dropping empty items.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// OptionsFromConfig turns a RenderConfig spec (the KRM functionConfig, or
// the CLI's flags) into engine options. Empty fields keep the defaults:
// platform from the API versions, namespace "default", both dialects.
func OptionsFromConfig(c v1alpha1.RenderConfigSpec) (Options, error) {
	o := Options{Namespace: c.Namespace, KubeVersion: c.KubeVersion, APIVersions: c.APIVersions, Defaults: map[string]string{}}
	if c.Platform != "" {
		p, err := generators.ParsePlatform(c.Platform)
		if err != nil {
			return o, fmt.Errorf("%w: %v", ErrOptions, err)
		}
		o.Platform = p
	} else {
		o.Platform = PlatformFromAPIVersions(c.APIVersions)
	}
	if c.Dialects != nil {
		ds, err := engines.ParseDialects(strings.Join(c.Dialects, ","))
		if err != nil {
			return o, fmt.Errorf("%w: %v", ErrOptions, err)
		}
		o.Dialects = ds
	}
	if c.Wave != nil {
		o.Defaults[inventory.ApplyOrder] = strconv.Itoa(int(*c.Wave))
	}
	if p := c.Policies; p != nil {
		for key, v := range map[string]string{
			inventory.AdoptionPolicy: p.Adoption, inventory.UpdatePolicy: p.Update,
			inventory.DeletePolicy: p.Delete, inventory.ReconcilePolicy: p.Reconcile,
		} {
			if v != "" {
				o.Defaults[key] = v
			}
		}
	}
	for key, v := range o.Defaults {
		nv, err := checkLifecycleValue(key, v)
		if err != nil {
			return o, fmt.Errorf("%w: %s: %v", ErrOptions, key, err)
		}
		o.Defaults[key] = nv
	}
	return o, nil
}

// DecodeStrictJSON decodes JSON into v, refusing unknown fields.
func DecodeStrictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrOptions, err)
	}
	return nil
}
