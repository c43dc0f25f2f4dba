// Command wavesmith-status runs the thin status controller: it watches
// Kaoto and Component resources and writes only their status. It parses
// flags and wires them to package internal/status.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/wavesmith/wavesmith/internal/status"
)

func main() {
	var o status.Options
	var namespaces string
	fs := flag.NewFlagSet("wavesmith-status", flag.ContinueOnError)
	fs.StringVar(&namespaces, "namespaces", "", "comma-separated namespaces to watch (default: all)")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", ":8080", "address of the Prometheus metrics endpoint (\"0\" disables it)")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz (\"0\" disables them)")
	fs.BoolVar(&o.LeaderElection, "leader-elect", true, "elect a leader through a Lease, so that only one replica writes")
	fs.StringVar(&o.WatchLabelSelector, "watch-label-selector", "", "label selector of the Kaoto and Component resources this replica handles, a shard (e.g. "+status.ShardKey+"=shard1; the main instance: !"+status.ShardKey+"); default: all")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", "", "name of the Lease (default: "+status.DefaultLeaderElectionID+", or wavesmith-status-<shard>.wavesmith.io with --watch-label-selector="+status.ShardKey+"=<shard>)")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the Lease (default: the pod's)")
	fs.IntVar(&o.Workers, "workers", status.DefaultWorkers, "specs of each kind reconciled at once")
	var qps float64
	fs.Float64Var(&qps, "kube-api-qps", status.DefaultQPS, "requests per second to the API server")
	fs.IntVar(&o.Burst, "kube-api-burst", status.DefaultBurst, "burst of requests to the API server")
	zopts := zap.Options{}
	zopts.BindFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: wavesmith-status [flags]\n\nWatches Kaoto and Component resources, reads the children their\nwavesmith.io/inventory lists, and writes only their status.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if _, err := labels.Parse(o.WatchLabelSelector); err != nil {
		fmt.Fprintf(os.Stderr, "error: --watch-label-selector %q: %v\n", o.WatchLabelSelector, err)
		os.Exit(2)
	}
	o.QPS = float32(qps)
	for _, ns := range strings.Split(namespaces, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			o.Namespaces = append(o.Namespaces, ns)
		}
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zopts)))
	setMemoryLimit(os.Getenv)
	cfg, err := ctrl.GetConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	mgr, err := status.NewManager(cfg, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	// The manager gives up its Lease when it stops
	// (LeaderElectionReleaseOnCancel): the process must end right after.
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// setMemoryLimit makes the Go runtime collect harder, rather than the
// container be killed, near its memory limit: MEMORY_LIMIT (the limit in
// bytes, from the Downward API's limits.memory) less a tenth for what the
// runtime does not count. GOMEMLIMIT, when set, wins.
func setMemoryLimit(getenv func(string) string) int64 {
	if getenv("GOMEMLIMIT") != "" {
		return -1
	}
	n, err := strconv.ParseInt(getenv("MEMORY_LIMIT"), 10, 64)
	if err != nil || n <= 0 {
		return -1
	}
	limit := n / 10 * 9
	debug.SetMemoryLimit(limit)
	return limit
}
