package redistest

import "fmt"

// StandaloneCluster starts a 3-master cluster (StartCluster) outside any
// test, for benchmark programs. stop stops its nodes and removes their
// directories.
func StandaloneCluster() (c *Cluster, stop func(), err error) {
	tb := &mainTB{}
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(fatal)
			if !ok {
				panic(r)
			}
			tb.cleanup()
			c, stop, err = nil, nil, fmt.Errorf("%s", string(f))
		}
	}()
	return StartCluster(tb), tb.cleanup, nil
}
