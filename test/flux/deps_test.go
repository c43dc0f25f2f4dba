package flux

// The packages this module pins for its tests (go.mod), listed in one place.
import (
	_ "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	_ "github.com/fluxcd/cli-utils/pkg/object"
	_ "github.com/fluxcd/kustomize-controller/api/v1"
	_ "github.com/fluxcd/pkg/apis/meta"
	_ "github.com/fluxcd/pkg/ssa/utils"
	_ "github.com/fluxcd/pkg/tar"
	_ "github.com/fluxcd/source-controller/api/v1"
	_ "github.com/google/go-cmp/cmp"
	_ "sigs.k8s.io/controller-runtime/pkg/client"
	_ "sigs.k8s.io/controller-runtime/pkg/envtest"
	_ "sigs.k8s.io/kustomize/api/krusty"
	_ "sigs.k8s.io/kustomize/kyaml/filesys"
	_ "sigs.k8s.io/yaml"
)
