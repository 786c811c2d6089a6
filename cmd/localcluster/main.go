// Command localcluster is the supervisor of the local cluster and its image
// tool (DESIGN §9). hack/cluster.sh runs it; nobody needs to call it directly.
//
//	localcluster run --dir DIR --bin BIN --pause FILE --busybox FILE --host-netns NS --host-mntns NS
//	    inside `unshare -n -m --propagation private`: the cluster, until SIGTERM
//	localcluster image --base REF --file /DEST=SRC... [--entrypoint PATH] --push REF
//	    build an image from host files on base and push it; prints REF@sha256:...
//	localcluster provision-volumes --kubeconfig FILE --dir DIR --node NAME
//	    inside the cluster (the supervisor starts it): the local StorageClass
//	localcluster cleanup --netns 'net:[N]'
//	    after a crash: kill what is left in that network namespace and the cluster's cgroups
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/google/go-containerregistry/pkg/v1/empty"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/localcluster"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "localcluster:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: localcluster run|image|cleanup [flags]")
	}
	switch args[0] {
	case "run":
		return runCluster(args[1:])
	case "image":
		return buildImage(args[1:])
	case "cleanup":
		return cleanup(args[1:])
	case "provision-volumes":
		return provisionVolumes(args[1:])
	}
	return fmt.Errorf("unknown command %q", args[0])
}

func runCluster(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	dir := fs.String("dir", "", "state directory")
	bin := fs.String("bin", "", "directory of the Kubernetes binaries")
	pause := fs.String("pause", "", "static pause binary")
	busybox := fs.String("busybox", "/bin/busybox", "static busybox binary")
	hostNet := fs.String("host-netns", "", "the host's network namespace (/proc/self/ns/net outside), which the cluster must not use")
	hostMnt := fs.String("host-mntns", "", "the host's mount namespace (/proc/self/ns/mnt outside)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || *bin == "" || *pause == "" {
		return errors.New("run: --dir, --bin and --pause are required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	s := &localcluster.Supervisor{
		Layout:  localcluster.Layout{Dir: *dir, Bin: *bin},
		Network: localcluster.DefaultNetwork,
		Log:     log.New(os.Stderr, "localcluster: ", log.Ltime),
		Host:    localcluster.HostNamespaces{Net: *hostNet, Mnt: *hostMnt},
	}
	return s.Run(ctx, localcluster.BaseImages{Pause: *pause, Busybox: *busybox})
}

func provisionVolumes(args []string) error {
	fs := flag.NewFlagSet("provision-volumes", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "an admin kubeconfig")
	dir := fs.String("dir", "", "where volumes' directories are made")
	node := fs.String("node", "", "the node whose directories they are")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *kubeconfig == "" || *dir == "" || *node == "" {
		return errors.New("provision-volumes: --kubeconfig, --dir and --node are required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return localcluster.ProvisionVolumes(ctx, *kubeconfig, *dir, *node, log.New(os.Stderr, "volume-provisioner: ", log.Ltime))
}

type fileFlags []string

func (f *fileFlags) String() string     { return strings.Join(*f, ",") }
func (f *fileFlags) Set(v string) error { *f = append(*f, v); return nil }

func buildImage(args []string) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	base := fs.String("base", "", "base image (default: empty)")
	push := fs.String("push", "", "reference to push to")
	entrypoint := fs.String("entrypoint", "", "entrypoint (default: the first --file)")
	var files fileFlags
	fs.Var(&files, "file", "/DEST=SRC: a host file in the image; repeatable")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *push == "" || len(files) == 0 {
		return errors.New("image: --push and at least one --file are required")
	}
	img := empty.Image
	if *base != "" {
		var err error
		if img, err = localcluster.Pull(*base); err != nil {
			return fmt.Errorf("pulling base %s: %w", *base, err)
		}
	}
	var layer []localcluster.File
	for _, f := range files {
		dest, src, ok := strings.Cut(f, "=")
		if !ok || !strings.HasPrefix(dest, "/") {
			return fmt.Errorf("image: --file %q: want /DEST=SRC", f)
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		layer = append(layer, localcluster.File{Path: strings.TrimPrefix(dest, "/"), Mode: 0o755, Content: data})
	}
	ep := *entrypoint
	if ep == "" {
		ep, _, _ = strings.Cut(files[0], "=")
	}
	out, err := localcluster.Build(img, layer, []string{ep}, localcluster.NonRootUID)
	if err != nil {
		return err
	}
	ref, err := localcluster.Push(out, *push)
	if err != nil {
		return err
	}
	fmt.Println(ref)
	return nil
}

func cleanup(args []string) error {
	fs := flag.NewFlagSet("cleanup", flag.ContinueOnError)
	netns := fs.String("netns", "", "the cluster's network namespace, as /proc/PID/ns/net reads")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *netns != "" {
		if host, _ := os.Readlink("/proc/self/ns/net"); host == *netns {
			return errors.New("cleanup: refusing to kill processes in the host's network namespace")
		}
		for _, pid := range localcluster.ProcessesInNetns(*netns) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return localcluster.RemoveCgroups()
}
