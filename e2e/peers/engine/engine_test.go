// Package engine drives Kyverno's own CEL engines (ValidatingPolicy and MutatingPolicy, from
// Kyverno's Go module at the version go.mod pins) the way Kyverno's engine benchmarks drive
// them, at 1, 16 and 64 matched policies, for issue 15 item 3. TestDump writes the exact inputs
// (the object bytes, an AdmissionReview carrying them, the policies as YAML) and Kyverno's
// decisions, so that celer's bench (`cargo bench -p celer-policy --bench peer_inputs`) runs on
// the same bytes and checks it decides the same. Driven by e2e/peers/engine.sh.
package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	policiesv1beta1 "github.com/kyverno/api/api/policies.kyverno.io/v1beta1"
	celengine "github.com/kyverno/kyverno/pkg/cel/engine"
	"github.com/kyverno/kyverno/pkg/cel/libs"
	"github.com/kyverno/kyverno/pkg/cel/matching"
	mpolcompiler "github.com/kyverno/kyverno/pkg/cel/policies/mpol/compiler"
	mpolengine "github.com/kyverno/kyverno/pkg/cel/policies/mpol/engine"
	vpolcompiler "github.com/kyverno/kyverno/pkg/cel/policies/vpol/compiler"
	vpolengine "github.com/kyverno/kyverno/pkg/cel/policies/vpol/engine"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/yaml"
)

var sizes = []int{1, 16, 64}

// padded is the 512-byte value each container carries, as in Kyverno's benchmarks.
func padded() string {
	b := make([]byte, 512)
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	return string(b)
}

// workload returns the JSON of a Pod (20 containers: about 12 KB, the object of Kyverno's
// ValidatingPolicy benchmark) or a Deployment (83 containers: about 50 KB, the object of its
// MutatingPolicy benchmark), each container with one padded env variable.
func workload(kind string, containers int) []byte {
	list := make([]any, 0, containers)
	for i := 0; i < containers; i++ {
		list = append(list, map[string]any{
			"name":  fmt.Sprintf("container-%d", i),
			"image": "nginx:1.21",
			"env":   []any{map[string]any{"name": "BENCH_PADDING", "value": padded()}},
		})
	}
	obj := map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "bench-pod", "namespace": "default"},
		"spec":     map[string]any{"containers": list}}
	if kind == "Deployment" {
		obj = map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "nginx", "namespace": "default"},
			"spec": map[string]any{"template": map[string]any{
				"spec": map[string]any{"containers": list}}}}
	}
	out, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	return out
}

// validatingYAML: n ValidatingPolicies on Pod CREATEs with an always-true validation.
func validatingYAML(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `---
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata:
  name: bench-policy-%d
spec:
  validationActions: [Deny]
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [pods]
  validations:
  - expression: request.object.metadata.name == request.object.metadata.name
`, i)
	}
	return b.String()
}

// mutatingYAML: n MutatingPolicies on Deployment CREATEs, each adding its own label by
// ApplyConfiguration.
func mutatingYAML(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `---
apiVersion: policies.kyverno.io/v1
kind: MutatingPolicy
metadata:
  name: bench-label-%d
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [deployments]
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"bench-%d": "true"}}}'
`, i, i)
	}
	return b.String()
}

func documents(text string) []string {
	var out []string
	for _, d := range strings.Split(text, "---\n") {
		if strings.TrimSpace(d) != "" {
			out = append(out, d)
		}
	}
	return out
}

func validatingEngine(tb testing.TB, n int) vpolengine.Engine {
	var policies []policiesv1beta1.ValidatingPolicyLike
	for _, d := range documents(validatingYAML(n)) {
		p := &policiesv1beta1.ValidatingPolicy{}
		if err := yaml.UnmarshalStrict([]byte(d), p); err != nil {
			tb.Fatal(err)
		}
		policies = append(policies, p)
	}
	provider, err := vpolengine.NewProvider(vpolcompiler.NewCompiler(), policies, nil)
	if err != nil {
		tb.Fatal(err)
	}
	// As Kyverno's BenchmarkHandle: no namespace, no matcher.
	return vpolengine.NewEngine(provider, func(string) *corev1.Namespace { return nil }, nil)
}

func validatingRequest(tb testing.TB) celengine.EngineRequest {
	pod := &unstructured.Unstructured{}
	if err := pod.UnmarshalJSON(workload("Pod", 20)); err != nil {
		tb.Fatal(err)
	}
	return celengine.Request(nil,
		schema.GroupVersionKind{Version: "v1", Kind: "Pod"},
		schema.GroupVersionResource{Version: "v1", Resource: "pods"},
		"", "bench-pod", "default", admissionv1.Create, authenticationv1.UserInfo{},
		pod, nil, false, nil)
}

// deducedTypes: the structure Kyverno's own engine tests give the MutatingPolicy engine (the
// object's types deduced from itself; no OpenAPI from a cluster).
type deducedTypes struct{}

func (deducedTypes) GetTypeConverter(schema.GroupVersionKind) managedfields.TypeConverter {
	return managedfields.NewDeducedTypeConverter()
}

func mutatingEngine(tb testing.TB, n int) mpolengine.Engine {
	var policies []policiesv1beta1.MutatingPolicyLike
	for _, d := range documents(mutatingYAML(n)) {
		p := &policiesv1beta1.MutatingPolicy{}
		if err := yaml.UnmarshalStrict([]byte(d), p); err != nil {
			tb.Fatal(err)
		}
		policies = append(policies, p)
	}
	provider, err := mpolengine.NewProvider(mpolcompiler.NewCompiler(), policies, nil, libs.NewFakeContextProvider())
	if err != nil {
		tb.Fatal(err)
	}
	return mpolengine.NewEngine(provider,
		func(ns string) *corev1.Namespace { return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}} },
		matching.NewMatcher(), deducedTypes{}, &libs.FakeContextProvider{})
}

func mutatingRequest() celengine.EngineRequest {
	dryRun := true
	return celengine.EngineRequest{Request: admissionv1.AdmissionRequest{
		UID:       "bench",
		Kind:      metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
		Resource:  metav1.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		Namespace: "default",
		Name:      "nginx",
		Operation: admissionv1.Create,
		Object:    runtime.RawExtension{Raw: workload("Deployment", 83)},
		DryRun:    &dryRun,
	}}
}

func allMutating(policiesv1beta1.MutatingPolicyLike) bool { return true }

func BenchmarkValidatingPolicy(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			eng := validatingEngine(b, n)
			req := validatingRequest(b)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := eng.Handle(context.Background(), req, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkMutatingPolicy(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			eng := mutatingEngine(b, n)
			req := mutatingRequest()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := eng.Handle(context.Background(), req, allMutating); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// review is an AdmissionReview v1 for a CREATE of object, as kube-apiserver sends it.
func review(object []byte, group, kind, resource, name string) []byte {
	r := map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
		"request": map[string]any{
			"uid":       "bench",
			"kind":      map[string]any{"group": group, "version": "v1", "kind": kind},
			"resource":  map[string]any{"group": group, "version": "v1", "resource": resource},
			"name":      name,
			"namespace": "default",
			"operation": "CREATE",
			"userInfo":  map[string]any{},
			"object":    json.RawMessage(object),
			"dryRun":    false,
		}}
	out, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	return out
}

// TestDump writes the inputs and Kyverno's decisions into $PEER_DUMP (skipped without it):
// vpol-review.json, vpol-N.yaml and vpol-N.decision.json (each policy's rule statuses);
// mpol-review.json, mpol-N.yaml and mpol-N.decision.json (the patched object's labels).
func TestDump(t *testing.T) {
	dir := os.Getenv("PEER_DUMP")
	if dir == "" {
		t.Skip("PEER_DUMP not set")
	}
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("vpol-review.json", review(workload("Pod", 20), "", "Pod", "pods", "bench-pod"))
	write("mpol-review.json", review(workload("Deployment", 83), "apps", "Deployment", "deployments", "nginx"))
	for _, n := range sizes {
		write(fmt.Sprintf("vpol-%d.yaml", n), []byte(validatingYAML(n)))
		resp, err := validatingEngine(t, n).Handle(context.Background(), validatingRequest(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		// Each evaluated policy with the resources it matches and its rules' statuses. Without
		// a matcher (as in Kyverno's benchmark) the autogen variants Kyverno derives for Pod
		// controllers run too, and fail on a Pod; the Pod policies are the decision.
		var evaluated []map[string]any
		for _, p := range resp.Policies {
			var resources []string
			if mc := p.Policy.GetValidatingPolicySpec().MatchConstraints; mc != nil {
				for _, r := range mc.ResourceRules {
					resources = append(resources, r.Resources...)
				}
			}
			var statuses []string
			for _, r := range p.Rules {
				statuses = append(statuses, string(r.Status()))
			}
			evaluated = append(evaluated, map[string]any{"name": p.Policy.GetName(),
				"resources": resources, "statuses": statuses})
		}
		out, _ := json.MarshalIndent(map[string]any{"policies": evaluated}, "", "  ")
		write(fmt.Sprintf("vpol-%d.decision.json", n), out)

		write(fmt.Sprintf("mpol-%d.yaml", n), []byte(mutatingYAML(n)))
		mresp, err := mutatingEngine(t, n).Handle(context.Background(), mutatingRequest(), allMutating)
		if err != nil {
			t.Fatal(err)
		}
		if mresp.PatchedResource == nil {
			t.Fatalf("mpol N=%d: no patched resource", n)
		}
		labels := mresp.PatchedResource.GetLabels()
		keys := make([]string, 0, len(labels))
		for k := range labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out, _ = json.MarshalIndent(map[string]any{"policies": len(mresp.Policies), "labels": labels, "keys": keys}, "", "  ")
		write(fmt.Sprintf("mpol-%d.decision.json", n), out)
	}
}
