//go:build tools

// Package tools pins the Kubernetes release whose kube-apiserver the end-to-end tests run;
// build.sh builds the command from this module's requirements.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
