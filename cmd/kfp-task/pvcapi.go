package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// claimAPI is what kfp-task pvc asks of the Kubernetes API, in the pod's
// own namespace.
type claimAPI interface {
	create(ctx context.Context, c *corev1.PersistentVolumeClaim) error
	get(ctx context.Context, name string) (*corev1.PersistentVolumeClaim, error)
	delete(ctx context.Context, name, uid string) error
}

var (
	errAlreadyExists = errors.New("already exists")
	errNotFound      = errors.New("not found")
)

// serviceAccountDir is where the kubelet mounts the pod's account token.
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// restClaims calls the API over HTTPS with the pod's token.
type restClaims struct {
	client    *http.Client
	base      string // https://host:port/api/v1/namespaces/NS/persistentvolumeclaims
	tokenFile string
}

// inClusterClaims reaches the API server the way client-go's in-cluster
// configuration does: its address from the environment, the token, CA
// and namespace from the mounted service account.
func inClusterClaims() (*restClaims, error) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, errors.New("not in a cluster (KUBERNETES_SERVICE_HOST/PORT unset)")
	}
	ns, err := os.ReadFile(serviceAccountDir + "/namespace")
	if err != nil {
		return nil, fmt.Errorf("no service account token mounted (run the task with the account that manages PVCs): %w", err)
	}
	ca, err := os.ReadFile(serviceAccountDir + "/ca.crt")
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, errors.New("the service account's ca.crt holds no certificate")
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	base := "https://" + net.JoinHostPort(host, port)
	return newRESTClaims(client, base, strings.TrimSpace(string(ns)), serviceAccountDir+"/token"), nil
}

func newRESTClaims(client *http.Client, server, namespace, tokenFile string) *restClaims {
	return &restClaims{client: client, tokenFile: tokenFile,
		base: server + "/api/v1/namespaces/" + url.PathEscape(namespace) + "/persistentvolumeclaims"}
}

func (r *restClaims) do(ctx context.Context, method, name string, body, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	u := r.base
	if name != "" {
		u += "/" + url.PathEscape(name)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	token, err := os.ReadFile(r.tokenFile) // re-read: the kubelet rotates it
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	switch {
	case resp.StatusCode == http.StatusConflict && method == http.MethodPost:
		return errAlreadyExists
	case resp.StatusCode == http.StatusNotFound:
		return errNotFound
	case resp.StatusCode >= 300:
		var status metav1.Status
		if json.Unmarshal(data, &status) == nil && status.Message != "" {
			return fmt.Errorf("%s %s: %s", method, resp.Status, status.Message)
		}
		return fmt.Errorf("%s: %s", method, resp.Status)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

func (r *restClaims) create(ctx context.Context, c *corev1.PersistentVolumeClaim) error {
	c.APIVersion, c.Kind = "v1", "PersistentVolumeClaim"
	return r.do(ctx, http.MethodPost, "", c, nil)
}

func (r *restClaims) get(ctx context.Context, name string) (*corev1.PersistentVolumeClaim, error) {
	var c corev1.PersistentVolumeClaim
	if err := r.do(ctx, http.MethodGet, name, nil, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// delete deletes the claim only if it is still the one checked (uid).
func (r *restClaims) delete(ctx context.Context, name, uid string) error {
	opts := metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "DeleteOptions"}}
	if uid != "" {
		u := types.UID(uid)
		opts.Preconditions = &metav1.Preconditions{UID: &u}
	}
	return r.do(ctx, http.MethodDelete, name, opts, nil)
}
