// Command wavesmith-status runs the thin status controller: it watches
// Kaoto and Component resources and writes only their status. It parses
// flags and wires them to package internal/status.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

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
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", status.DefaultLeaderElectionID, "name of the Lease")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the Lease (default: the pod's)")
	fs.IntVar(&o.Workers, "workers", 4, "specs of each kind reconciled at once")
	var qps float64
	fs.Float64Var(&qps, "kube-api-qps", 50, "requests per second to the API server")
	fs.IntVar(&o.Burst, "kube-api-burst", 100, "burst of requests to the API server")
	zopts := zap.Options{}
	zopts.BindFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: wavesmith-status [flags]\n\nWatches Kaoto and Component resources, reads the children their\nwavesmith.io/inventory lists, and writes only their status.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	o.QPS = float32(qps)
	for _, ns := range strings.Split(namespaces, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			o.Namespaces = append(o.Namespaces, ns)
		}
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zopts)))
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
