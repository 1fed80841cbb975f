package k8s

import (
	"bytes"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// The manifests hold, in applying order, the Secret, ConfigMap (the plan verbatim), PVC,
// Service and the two Jobs; the workers are an Indexed Job with completions = parallelism = N,
// backoffLimitPerIndex, Never restarts and anti-affinity over nodes; every command argument is
// a string; the token appears in the Secret only.
func TestManifests(t *testing.T) {
	plan := "target:\n  url: http://vllm:8000/v1\nuse_cases: []\n"
	y, err := Manifests(Options{Image: "reg/sb:1", Workers: 4, Plan: []byte(plan), Token: "tok-123", Namespace: "bench", ExtraArgs: []string{"--precision", "0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(y), "tok-123") != 1 {
		t.Errorf("the token appears %d times, want once (the Secret)", strings.Count(string(y), "tok-123"))
	}
	var kinds []string
	objs := map[string]map[string]any{}
	for _, doc := range bytes.Split(y, []byte("\n---\n"))[1:] {
		var o map[string]any
		if err := yaml.Unmarshal(doc, &o); err != nil {
			t.Fatalf("%v in\n%s", err, doc)
		}
		md := o["metadata"].(map[string]any)
		if md["namespace"] != "bench" {
			t.Errorf("%s: namespace %v", md["name"], md["namespace"])
		}
		kinds = append(kinds, o["kind"].(string))
		objs[md["name"].(string)] = o
	}
	if got := strings.Join(kinds, ","); got != "Secret,ConfigMap,PersistentVolumeClaim,Service,Job,Job" {
		t.Fatalf("kinds %s", got)
	}
	if got := objs["servebench-plan"]["data"].(map[string]any)["plan.yaml"]; got != plan {
		t.Errorf("plan in the ConfigMap %q, want %q", got, plan)
	}
	w := objs["servebench-workers"]["spec"].(map[string]any)
	if w["completionMode"] != "Indexed" || w["completions"] != uint64(4) || w["parallelism"] != uint64(4) || w["backoffLimitPerIndex"] != uint64(2) {
		t.Errorf("workers spec %v", w)
	}
	pod := w["template"].(map[string]any)["spec"].(map[string]any)
	if pod["restartPolicy"] != "Never" {
		t.Errorf("restartPolicy %v: backoffLimitPerIndex needs Never", pod["restartPolicy"])
	}
	if !strings.Contains(string(y), "podAntiAffinity") || !strings.Contains(string(y), "topologyKey: kubernetes.io/hostname") {
		t.Error("no anti-affinity over nodes")
	}
	for name, o := range objs {
		if o["kind"] != "Job" {
			continue
		}
		c := o["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
		for _, a := range c["command"].([]any) {
			if _, ok := a.(string); !ok {
				t.Errorf("%s: command argument %v is not a string", name, a)
			}
		}
	}
	want := "servebench worker --coordinator tcp://servebench-coordinator:7070"
	if !strings.Contains(strings.ReplaceAll(string(y), "\n        - ", " "), want) {
		t.Errorf("the workers do not run %q:\n%s", want, y)
	}

	for _, bad := range []Options{
		{Image: "", Workers: 1, Plan: []byte("x"), Token: "t"},
		{Image: "i", Workers: 0, Plan: []byte("x"), Token: "t"},
		{Image: "i", Workers: 1, Token: "t"},
		{Image: "i", Workers: 1, Plan: []byte("x"), Token: "t", Name: "Bad_Name"},
	} {
		if _, err := Manifests(bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// An API key in a variable other than OPENAI_API_KEY or SERVEBENCH_* is sent only with the
// user's leave: naming it to servebench k8s gives it, so the coordinator and every worker are
// started with --allow-env for it (and without, for the default).
func TestManifestsAllowTheKeyVariable(t *testing.T) {
	for env, want := range map[string]int{"MY_GATEWAY_KEY": 2, "OPENAI_API_KEY": 0, "SERVEBENCH_KEY": 0} {
		y, err := Manifests(Options{Image: "reg/sb:1", Workers: 2, Plan: []byte("target: {url: http://x/v1}\n"), Token: "tok-123", APIKeySecret: "gw", APIKeyEnv: env})
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(y), "--allow-env"); n != want || (want > 0 && strings.Count(string(y), "- --allow-env\n")+strings.Count(string(y), "- "+env+"\n") != 2*want) {
			t.Errorf("%s: --allow-env %d times, want %d:\n%s", env, n, want, y)
		}
	}
}
