module github.com/wavesmith/wavesmith/test/testinputs

go 1.24
