// CoreDNS with the few plugins the local Kubernetes needs (its cluster DNS: the names of
// services and pods, such as the headless service Spark makes for a driver in cluster deploy
// mode). `go install github.com/coredns/coredns@version` would build every plugin CoreDNS
// ships, clouds' included; CoreDNS's own way to build fewer is a main of one's own that sets
// the server's directives (the order its plugin.cfg gives them) and imports only those plugins.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
)

func init() {
	dnsserver.Directives = []string{"bind", "errors", "log", "cache", "kubernetes"}
}

func main() {
	coremain.Run()
}
