// Command nodeagent is a test-only "process kubelet" for the real-Kubernetes test tier: it
// registers Ready nodes with the API server, keeps their heartbeat, and runs each pod bound to
// them as a local process — its command with the image's binary (--binary), its environment
// (values, Secret keys, the downward API), ConfigMap and PersistentVolumeClaim volumes as local
// folders — and reports Running, then Succeeded or Failed with the exit code. Service names and
// 0.0.0.0 in arguments are rewritten to 127.0.0.1 (--rewrite): the pods share this machine's
// loopback. It never runs containers.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

type agent struct {
	cs      *kubernetes.Clientset
	binary  string
	root    string
	rewrite map[string]string
	mu      sync.Mutex
	running map[string]*exec.Cmd // pod UID → process
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the API server")
	nodes := flag.Int("nodes", 3, "nodes to register (node-1 …)")
	binary := flag.String("binary", "", "the binary that stands in for every image's command[0]")
	root := flag.String("root", "", "folder for the pods' volumes and logs")
	rewrite := flag.String("rewrite", "", "host=replacement pairs applied to arguments, comma separated")
	flag.Parse()
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		log.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		log.Fatal(err)
	}
	a := &agent{cs: cs, binary: *binary, root: *root, rewrite: map[string]string{}, running: map[string]*exec.Cmd{}}
	for _, kv := range strings.Split(*rewrite, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			a.rewrite[k] = v
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var names []string
	for i := 1; i <= *nodes; i++ {
		names = append(names, fmt.Sprintf("node-%d", i))
	}
	for _, n := range names {
		if err := a.register(ctx, n); err != nil {
			log.Fatalf("registering %s: %v", n, err)
		}
	}
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	beat := time.Now()
	for {
		select {
		case <-ctx.Done():
			a.killAll()
			return
		case <-tick.C:
		}
		if time.Since(beat) > 3*time.Second {
			for _, n := range names {
				if err := a.heartbeat(ctx, n); err != nil {
					log.Printf("heartbeat %s: %v", n, err)
				}
			}
			beat = time.Now()
		}
		for _, n := range names {
			a.syncPods(ctx, n)
		}
	}
}

func readyConditions(now metav1.Time) []corev1.NodeCondition {
	return []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "process agent",
		LastHeartbeatTime: now, LastTransitionTime: now}}
}

func (a *agent) register(ctx context.Context, name string) error {
	caps := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}}}
	created, err := a.cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		created, err = a.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	}
	if err != nil {
		return err
	}
	for try := 0; ; try++ {
		now := metav1.Now()
		created.Status = corev1.NodeStatus{Capacity: caps, Allocatable: caps, Conditions: readyConditions(now),
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}, {Type: corev1.NodeHostName, Address: name}},
			NodeInfo:  corev1.NodeSystemInfo{KubeletVersion: "v1.36.1", OperatingSystem: "linux", Architecture: "amd64"}}
		_, err = a.cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
		if err == nil {
			break
		}
		if !apierrors.IsConflict(err) || try > 10 {
			return err
		}
		// the node lifecycle controller changed it meanwhile: start from its version
		if created, err = a.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); err != nil {
			return err
		}
	}
	return a.heartbeat(ctx, name)
}

func (a *agent) heartbeat(ctx context.Context, name string) error {
	n, err := a.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	n.Status.Conditions = readyConditions(metav1.Now())
	if _, err := a.cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) {
		return err // a conflict: the next beat comes in 5 s
	}
	leases := a.cs.CoordinationV1().Leases("kube-node-lease")
	now := metav1.NewMicroTime(time.Now())
	secs := int32(40)
	l, err := leases.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(ctx, &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: coordv1.LeaseSpec{HolderIdentity: &name, LeaseDurationSeconds: &secs, RenewTime: &now}}, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	l.Spec.RenewTime = &now
	_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
	return err
}

func (a *agent) syncPods(ctx context.Context, node string) {
	pods, err := a.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		log.Printf("listing pods: %v", err)
		return
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		a.mu.Lock()
		_, started := a.running[string(p.UID)]
		a.mu.Unlock()
		switch {
		case p.DeletionTimestamp != nil:
			a.kill(string(p.UID))
			_ = a.cs.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, *metav1.NewDeleteOptions(0))
		case p.Status.Phase == corev1.PodPending && !started:
			a.start(ctx, p)
		}
	}
}

// start runs the pod's first container as a local process.
func (a *agent) start(ctx context.Context, p *corev1.Pod) {
	dir := filepath.Join(a.root, "pods", p.Namespace+"_"+p.Name)
	fail := func(err error) {
		log.Printf("pod %s/%s: %v", p.Namespace, p.Name, err)
		a.setStatus(ctx, p, corev1.PodFailed, 1, err.Error())
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fail(err)
		return
	}
	mounts := map[string]string{} // volume name → local folder
	for _, v := range p.Spec.Volumes {
		switch {
		case v.ConfigMap != nil:
			cm, err := a.cs.CoreV1().ConfigMaps(p.Namespace).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				fail(err)
				return
			}
			d := filepath.Join(dir, "volumes", v.Name)
			_ = os.MkdirAll(d, 0o755)
			for k, val := range cm.Data {
				_ = os.WriteFile(filepath.Join(d, k), []byte(val), 0o644)
			}
			mounts[v.Name] = d
		case v.PersistentVolumeClaim != nil:
			d := filepath.Join(a.root, "claims", p.Namespace+"_"+v.PersistentVolumeClaim.ClaimName)
			_ = os.MkdirAll(d, 0o755)
			mounts[v.Name] = d
		default:
			d := filepath.Join(dir, "volumes", v.Name)
			_ = os.MkdirAll(d, 0o755)
			mounts[v.Name] = d
		}
	}
	c := p.Spec.Containers[0]
	paths := map[string]string{} // mount path → local folder
	for _, m := range c.VolumeMounts {
		paths[m.MountPath] = mounts[m.Name]
	}
	local := func(arg string) string {
		for mp, d := range paths {
			if arg == mp || strings.HasPrefix(arg, mp+"/") {
				return d + strings.TrimPrefix(arg, mp)
			}
		}
		for from, to := range a.rewrite {
			arg = strings.ReplaceAll(arg, from, to)
		}
		return arg
	}
	argv := append(append([]string{}, c.Command...), c.Args...)
	if len(argv) == 0 {
		fail(fmt.Errorf("no command"))
		return
	}
	for i := range argv {
		argv[i] = local(argv[i])
	}
	argv[0] = a.binary
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "HOSTNAME=" + p.Name}
	for _, e := range c.Env {
		val := e.Value
		if f := e.ValueFrom; f != nil {
			switch {
			case f.SecretKeyRef != nil:
				s, err := a.cs.CoreV1().Secrets(p.Namespace).Get(ctx, f.SecretKeyRef.Name, metav1.GetOptions{})
				if err != nil {
					fail(err)
					return
				}
				val = string(s.Data[f.SecretKeyRef.Key])
			case f.FieldRef != nil:
				val = fieldValue(p, f.FieldRef.FieldPath)
			}
		}
		env = append(env, e.Name+"="+val)
	}
	logf, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		fail(err)
		return
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Stdout, cmd.Stderr, cmd.Dir = env, logf, logf, dir
	if err := cmd.Start(); err != nil {
		logf.Close()
		fail(err)
		return
	}
	a.mu.Lock()
	a.running[string(p.UID)] = cmd
	a.mu.Unlock()
	log.Printf("pod %s/%s on %s: running %s", p.Namespace, p.Name, p.Spec.NodeName, strings.Join(argv, " "))
	a.setStatus(ctx, p, corev1.PodRunning, 0, "")
	go func() {
		err := cmd.Wait()
		logf.Close()
		code := 0
		if err != nil {
			code = 1
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
		}
		phase := corev1.PodSucceeded
		if code != 0 {
			phase = corev1.PodFailed
		}
		log.Printf("pod %s/%s exited %d", p.Namespace, p.Name, code)
		a.setStatus(context.WithoutCancel(ctx), p, phase, code, "")
	}()
}

func fieldValue(p *corev1.Pod, path string) string {
	switch {
	case path == "metadata.name":
		return p.Name
	case path == "metadata.namespace":
		return p.Namespace
	case strings.HasPrefix(path, "metadata.labels['"):
		return p.Labels[strings.TrimSuffix(strings.TrimPrefix(path, "metadata.labels['"), "']")]
	case strings.HasPrefix(path, "metadata.annotations['"):
		return p.Annotations[strings.TrimSuffix(strings.TrimPrefix(path, "metadata.annotations['"), "']")]
	}
	return ""
}

// setStatus reports the pod's phase (and its container's state) to the API server.
func (a *agent) setStatus(ctx context.Context, p *corev1.Pod, phase corev1.PodPhase, code int, msg string) {
	for range 5 {
		cur, err := a.cs.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return
		}
		now := metav1.Now()
		st := corev1.ContainerStatus{Name: cur.Spec.Containers[0].Name, Image: cur.Spec.Containers[0].Image, ImageID: "process://" + a.binary}
		ready := corev1.ConditionFalse
		switch phase {
		case corev1.PodRunning:
			st.State.Running = &corev1.ContainerStateRunning{StartedAt: now}
			st.Ready, st.Started, ready = true, ptr(true), corev1.ConditionTrue
		default:
			reason := "Completed"
			if phase == corev1.PodFailed {
				reason = "Error"
			}
			st.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: int32(code), Reason: reason, Message: msg, FinishedAt: now}
			st.Started = ptr(false)
		}
		cur.Status.Phase = phase
		cur.Status.HostIP, cur.Status.PodIP = "127.0.0.1", "127.0.0.1"
		if cur.Status.StartTime == nil {
			cur.Status.StartTime = &now
		}
		cur.Status.ContainerStatuses = []corev1.ContainerStatus{st}
		cur.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: ready, LastTransitionTime: now},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now}}
		if _, err = a.cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err == nil || !apierrors.IsConflict(err) {
			if err != nil {
				log.Printf("pod %s/%s status: %v", p.Namespace, p.Name, err)
			}
			return
		}
	}
}

func ptr[T any](v T) *T { return &v }

func (a *agent) kill(uid string) {
	a.mu.Lock()
	cmd := a.running[uid]
	a.mu.Unlock()
	if cmd != nil && cmd.Process != nil && cmd.ProcessState == nil {
		_ = cmd.Process.Kill()
	}
}

func (a *agent) killAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, cmd := range a.running {
		if cmd.Process != nil && cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	}
}
