// Command etcd is etcd's own server entry point, built from the etcd server module this
// directory's go.mod pins (the release kube-apiserver's etcd client is tested with).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
