//go:build tools

// Package tools pins the Kubernetes release whose kube-apiserver (and, for Kyverno's chainsaw
// tests, kube-controller-manager) the end-to-end tests run; build.sh builds the commands from
// this module's requirements.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
