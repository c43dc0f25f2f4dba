// Package kubetest starts a real kube-apiserver and etcd (controller-runtime
// envtest) for tests, from the binaries the Makefile builds into bin/.
package kubetest

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Cluster is a running envtest control plane.
type Cluster struct {
	Env    *envtest.Environment
	Config *rest.Config
}

// Start starts kube-apiserver and etcd from KUBEBUILDER_ASSETS, else from
// bin (the module's bin/ relative to the test's folder), with the CRDs of
// crdDirs installed. Missing binaries are an error that says how to build
// them; a test calls testtool.EnvtestAssets first, which skips it (under
// -short, or when the binaries are missing outside make test) or fails it.
func Start(bin string, crdDirs ...string) (*Cluster, error) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		var err error
		if assets, err = filepath.Abs(bin); err != nil {
			return nil, err
		}
	}
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(assets, b)); err != nil {
			return nil, fmt.Errorf("envtest needs %s in %s (%v): run 'make envtest', which builds it", b, assets, err)
		}
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:   assets,
		CRDDirectoryPaths:       crdDirs,
		ErrorIfCRDPathMissing:   true,
		ControlPlaneStopTimeout: time.Minute,
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting envtest: %w", err)
	}
	return &Cluster{Env: env, Config: cfg}, nil
}

// Kubeconfig writes a kubeconfig file for an administrator of the cluster
// into dir and returns its path.
func (c *Cluster) Kubeconfig(dir string) (string, error) {
	u, err := c.Env.AddUser(envtest.User{Name: "wavesmith-test", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", err
	}
	b, err := u.KubeConfig()
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "kubeconfig")
	return p, os.WriteFile(p, b, 0o600)
}

// Stop stops the control plane.
func (c *Cluster) Stop() error { return c.Env.Stop() }
