module github.com/wavesmith/wavesmith/test/testkit

go 1.24
