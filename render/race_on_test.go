//go:build race

package render

// raceBuild: the race detector is on. Its sync.Pool drops a random
// quarter of what is put back, so pooled scratch space (the encoder and
// the shapes it remembers) is made again at random: allocation counts
// run higher and vary from run to run.
const raceBuild = true
