// Package k8s writes the Kubernetes objects of a distributed run (`servebench k8s manifests`):
// the plan as a ConfigMap, the shared token as a Secret, the coordinator as a Job of one pod
// behind a Service, the workers as an Indexed Job spread over nodes, and a PersistentVolumeClaim
// for the run folder. It renders text only; it never talks to a cluster.
package k8s

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/goccy/go-yaml"
)

// Options describe one distributed run on Kubernetes.
type Options struct {
	// Name prefixes every object (default "servebench"); Namespace, when set, is theirs.
	Name, Namespace string
	// Image is the container image holding the servebench binary at /usr/local/bin/servebench.
	Image string
	// Workers is the worker count: the Indexed Job's completions and parallelism.
	Workers int
	// Plan is the plan file's text (servebench run --config).
	Plan []byte
	// Token is the shared secret of coordinator and workers (the Secret's value).
	Token string
	// Storage is the run folder volume's size (default 1Gi); StorageClass, when set, its class.
	Storage, StorageClass string
	// BackoffPerIndex is how often one worker index is retried (backoffLimitPerIndex, default 2).
	BackoffPerIndex int
	// APIKeySecret, when set, names a Secret whose key "api-key" becomes the API key variable
	// APIKeyEnv (default OPENAI_API_KEY) in every pod.
	APIKeySecret, APIKeyEnv string
	// Port is the coordinator's port (default 7070).
	Port int
	// ExtraArgs are appended to the coordinator's `servebench run` (for example --url).
	ExtraArgs []string
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// Manifests returns the objects as one multi-document YAML stream, in the order to apply them.
func Manifests(o Options) ([]byte, error) {
	if o.Name == "" {
		o.Name = "servebench"
	}
	if !dnsLabel.MatchString(o.Name) || len(o.Name) > 40 {
		return nil, fmt.Errorf("--name %q: use at most 40 lowercase letters, digits and '-', starting and ending with a letter or digit", o.Name)
	}
	if o.Namespace != "" && !dnsLabel.MatchString(o.Namespace) {
		return nil, fmt.Errorf("--namespace %q is not a valid namespace name", o.Namespace)
	}
	if o.Image == "" {
		return nil, errors.New("--image is required: the container image with the servebench binary (see docs/distributed.md to build one)")
	}
	if o.Workers < 1 {
		return nil, fmt.Errorf("--workers %d: need at least 1", o.Workers)
	}
	if len(o.Plan) == 0 {
		return nil, errors.New("--plan is required: the plan file the coordinator runs")
	}
	if o.Token == "" {
		return nil, errors.New("no token for the Secret")
	}
	if o.Storage == "" {
		o.Storage = "1Gi"
	}
	if o.BackoffPerIndex == 0 {
		o.BackoffPerIndex = 2
	}
	if o.APIKeyEnv == "" {
		o.APIKeyEnv = "OPENAI_API_KEY"
	}
	if o.Port == 0 {
		o.Port = 7070
	}
	coord, workers := o.Name+"-coordinator", o.Name+"-workers"
	secret, plan, runs := o.Name+"-token", o.Name+"-plan", o.Name+"-runs"
	meta := func(name, role string) map[string]any {
		m := map[string]any{"name": name, "labels": map[string]any{"app.kubernetes.io/name": "servebench", "app.kubernetes.io/instance": o.Name, "servebench/role": role}}
		if o.Namespace != "" {
			m["namespace"] = o.Namespace
		}
		return m
	}
	env := []any{map[string]any{"name": "SERVEBENCH_TOKEN", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": secret, "key": "token"}}}}
	if o.APIKeySecret != "" {
		env = append(env, map[string]any{"name": o.APIKeyEnv, "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": o.APIKeySecret, "key": "api-key"}}})
	}
	labels := func(role string) map[string]any {
		return map[string]any{"app.kubernetes.io/name": "servebench", "app.kubernetes.io/instance": o.Name, "servebench/role": role}
	}
	runArgs := []any{"servebench", "run", "--config", "/plan/plan.yaml", "--workers", fmt.Sprint(o.Workers), "--listen", fmt.Sprintf("0.0.0.0:%d", o.Port),
		"--out", "/runs/" + o.Name, "--index", "none", "--quiet", "--join-timeout", "10m"}
	workerArgs := []any{"servebench", "worker", "--coordinator", fmt.Sprintf("tcp://%s:%d", coord, o.Port)}
	if o.APIKeySecret != "" && o.APIKeyEnv != "OPENAI_API_KEY" && !strings.HasPrefix(o.APIKeyEnv, "SERVEBENCH_") {
		// the plan may send a variable other than these only with the user's leave, given here
		runArgs = append(runArgs, "--allow-env", o.APIKeyEnv)
		workerArgs = append(workerArgs, "--allow-env", o.APIKeyEnv)
	}
	runArgs = append(runArgs, anys(o.ExtraArgs)...)
	objs := []map[string]any{
		{"apiVersion": "v1", "kind": "Secret", "metadata": meta(secret, "token"), "type": "Opaque",
			"stringData": map[string]any{"token": o.Token}},
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(plan, "plan"), "data": map[string]any{"plan.yaml": string(o.Plan)}},
		{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta(runs, "runs"), "spec": pvcSpec(o)},
		{"apiVersion": "v1", "kind": "Service", "metadata": meta(coord, "coordinator"), "spec": map[string]any{
			"selector": labels("coordinator"),
			"ports":    []any{map[string]any{"name": "servebench", "port": o.Port, "targetPort": o.Port, "protocol": "TCP"}}}},
		{"apiVersion": "batch/v1", "kind": "Job", "metadata": meta(coord, "coordinator"), "spec": map[string]any{
			"backoffLimit": 0, "completions": 1, "parallelism": 1,
			"template": map[string]any{"metadata": map[string]any{"labels": labels("coordinator")}, "spec": map[string]any{
				"restartPolicy": "Never",
				// the image runs as a non-root user (65532): it must be able to write the run folder
				"securityContext": map[string]any{"fsGroup": 65532},
				"containers": []any{map[string]any{"name": "coordinator", "image": o.Image, "command": runArgs, "env": env,
					"ports": []any{map[string]any{"containerPort": o.Port, "name": "servebench"}},
					"volumeMounts": []any{map[string]any{"name": "plan", "mountPath": "/plan", "readOnly": true},
						map[string]any{"name": "runs", "mountPath": "/runs"}}}},
				"volumes": []any{map[string]any{"name": "plan", "configMap": map[string]any{"name": plan}},
					map[string]any{"name": "runs", "persistentVolumeClaim": map[string]any{"claimName": runs}}}}}}},
		{"apiVersion": "batch/v1", "kind": "Job", "metadata": meta(workers, "worker"), "spec": map[string]any{
			"completionMode": "Indexed", "completions": o.Workers, "parallelism": o.Workers, "backoffLimitPerIndex": o.BackoffPerIndex,
			"template": map[string]any{"metadata": map[string]any{"labels": labels("worker")}, "spec": map[string]any{
				"restartPolicy": "Never",
				"affinity": map[string]any{"podAntiAffinity": map[string]any{"preferredDuringSchedulingIgnoredDuringExecution": []any{
					map[string]any{"weight": 100, "podAffinityTerm": map[string]any{"topologyKey": "kubernetes.io/hostname",
						"labelSelector": map[string]any{"matchLabels": labels("worker")}}}}}},
				"containers": []any{map[string]any{"name": "worker", "image": o.Image, "env": env,
					"command": workerArgs}}}}}},
	}
	var b bytes.Buffer
	b.WriteString("# servebench distributed run: apply with  kubectl apply --server-side -f FILE\n")
	b.WriteString("# the coordinator writes the run folder to the PersistentVolumeClaim " + runs + " (folder /runs/" + o.Name + ")\n")
	for _, obj := range objs {
		y, err := yaml.MarshalWithOptions(obj, yaml.UseLiteralStyleIfMultiline(true))
		if err != nil {
			return nil, err
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return b.Bytes(), nil
}

func pvcSpec(o Options) map[string]any {
	s := map[string]any{"accessModes": []any{"ReadWriteOnce"}, "resources": map[string]any{"requests": map[string]any{"storage": o.Storage}}}
	if o.StorageClass != "" {
		s["storageClassName"] = o.StorageClass
	}
	return s
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
