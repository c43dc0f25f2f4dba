package flux

import (
	_ "github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	_ "github.com/fluxcd/cli-utils/pkg/object"
	_ "github.com/fluxcd/pkg/ssa"
	_ "github.com/fluxcd/pkg/ssa/normalize"
	_ "github.com/fluxcd/pkg/ssa/utils"
	_ "github.com/google/go-cmp/cmp"
	_ "sigs.k8s.io/controller-runtime/pkg/client"
	_ "sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	_ "sigs.k8s.io/controller-runtime/pkg/envtest"
	_ "sigs.k8s.io/kustomize/api/krusty"
	_ "sigs.k8s.io/kustomize/kyaml/filesys"
	_ "sigs.k8s.io/yaml"
)
