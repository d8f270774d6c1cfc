// etcd, built from its server module at the version go.mod names: `go install go.etcd.io/etcd/v3`
// is refused (its go.mod has replace lines), so this wrapper calls the same entry point that
// etcd's own main package calls.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
