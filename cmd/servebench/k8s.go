package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/servebench/servebench/dist"
	"github.com/servebench/servebench/k8s"
	"github.com/servebench/servebench/plan"
)

func newK8sCmd(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "k8s",
		Short: "Kubernetes: the manifests of a distributed run",
		Args:  noArgs,
	}
	var o k8s.Options
	var planPath, out string
	man := &cobra.Command{
		Use:   "manifests --workers N --plan plan.yaml --image IMAGE",
		Short: "Write the Kubernetes objects of a distributed run (coordinator Job and Service, workers as an Indexed Job)",
		Long: `Writes, as one YAML stream, what to apply for a distributed run on Kubernetes:
  - a Secret with the token coordinator and workers share ($` + tokenEnv + ` when set, else a new random one),
  - a ConfigMap with the plan,
  - a PersistentVolumeClaim for the run folder (/runs/NAME in the coordinator),
  - the coordinator: a Job of one pod running servebench run --workers N, with a Service,
  - the workers: an Indexed Job (completions = parallelism = N, backoffLimitPerIndex) whose pods
    prefer distinct nodes, each running servebench worker.
The plan must name its target (target.url): the workers reach the server from their own pods.
Apply with  kubectl apply --server-side -f FILE ; see docs/distributed.md.`,
		Example: `  servebench k8s manifests --workers 4 --plan plan.yaml --image registry.example/servebench:0.1 > servebench.yaml
  kubectl apply --server-side -f servebench.yaml`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if planPath == "" {
				return withCode(exitUsage, fmt.Errorf("--plan is required: the plan file the coordinator runs"))
			}
			b, err := os.ReadFile(planPath)
			if err != nil {
				return withCode(exitUsage, fmt.Errorf("--plan: %w", err))
			}
			f, err := plan.ParseFile(b)
			if err != nil {
				return withCode(exitUsage, fmt.Errorf("--plan %s: %w", planPath, err))
			}
			if f.TargetURL() == "" {
				return withCode(exitUsage, fmt.Errorf("--plan %s names no target.url: on Kubernetes the workers reach the server from their own pods, so the plan must say where it is", planPath))
			}
			o.Plan = b
			o.Token = e.getenv(tokenEnv)
			if o.Token != "" {
				if err := dist.CheckToken(o.Token, tokenEnv); err != nil {
					return withCode(exitUsage, fmt.Errorf("%w (or unset it: a random one is made)", err))
				}
			} else {
				t := make([]byte, 24)
				_, _ = rand.Read(t)
				o.Token = hex.EncodeToString(t)
			}
			y, err := k8s.Manifests(o)
			if err != nil {
				return withCode(exitUsage, err)
			}
			if out == "" || out == "-" {
				_, err = e.stdout.Write(y)
				return err
			}
			if err := os.WriteFile(out, y, 0o600); err != nil {
				return withCode(exitError, err)
			}
			fmt.Fprintf(e.stderr, "wrote %s (it holds the token: keep it private)\n", out)
			return nil
		},
	}
	fl := man.Flags()
	fl.IntVar(&o.Workers, "workers", 0, "number of workers (pods of the Indexed Job)")
	fl.StringVar(&planPath, "plan", "", "the plan file (servebench run --config); it must name target.url")
	fl.StringVar(&o.Image, "image", "", "container image with the servebench binary (see docs/distributed.md)")
	fl.StringVar(&o.Name, "name", "servebench", "prefix of every object's name")
	fl.StringVar(&o.Namespace, "namespace", "", "namespace of the objects (default: kubectl's)")
	fl.StringVar(&o.Storage, "storage", "1Gi", "size of the run folder's PersistentVolumeClaim")
	fl.StringVar(&o.StorageClass, "storage-class", "", "storage class of the PersistentVolumeClaim (default: the cluster's)")
	fl.IntVar(&o.BackoffPerIndex, "backoff-per-index", 2, "retries of one worker index before it counts as failed (backoffLimitPerIndex)")
	fl.StringVar(&o.APIKeySecret, "api-key-secret", "", "a Secret whose key api-key holds the target's API key (given to every pod as --api-key-env's variable)")
	fl.StringVar(&o.APIKeyEnv, "api-key-env", "OPENAI_API_KEY", "the variable the API key goes into (the plan's api_key_env)")
	fl.StringVar(&out, "out", "", "write to this file (mode 0600) instead of standard output")
	root.AddCommand(man)
	return root
}
