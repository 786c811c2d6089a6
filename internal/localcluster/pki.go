package localcluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certSpec is one certificate the cluster needs, signed by its CA.
type certSpec struct {
	file   string // base name of the .crt/.key pair under pki/
	cn     string
	orgs   []string
	server bool
	dns    []string
	ips    []net.IP
}

// clusterCerts are the cluster's client and serving certificates: one per
// component, each with the identity RBAC and the Node authorizer expect.
func clusterCerts(n Network) []certSpec {
	return []certSpec{
		{file: "apiserver", cn: "kube-apiserver", server: true,
			dns: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
			ips: []net.IP{net.ParseIP("127.0.0.1"), n.NodeIP, n.APIServiceIP}},
		{file: "apiserver-kubelet-client", cn: "kube-apiserver-kubelet-client", orgs: []string{"system:masters"}},
		{file: "admin", cn: "kubernetes-admin", orgs: []string{"system:masters"}},
		{file: "controller-manager", cn: "system:kube-controller-manager"},
		{file: "scheduler", cn: "system:kube-scheduler"},
		{file: "kube-proxy", cn: "system:kube-proxy"},
		{file: "kubelet", cn: "system:node:" + n.NodeName, orgs: []string{"system:nodes"}},
		{file: "kubelet-serving", cn: n.NodeName, server: true, dns: []string{n.NodeName, "localhost"}, ips: []net.IP{n.NodeIP, net.ParseIP("127.0.0.1")}},
	}
}

// writePKI creates the CA, the service-account key pair and every
// certificate of clusterCerts under dir.
func writePKI(dir string, n Network) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kfp-tekton-local-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, _ := x509.ParseCertificate(caDER)
	if err := writePair(dir, "ca", caDER, caKey); err != nil {
		return err
	}
	for i, spec := range clusterCerts(n) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(int64(i + 2)),
			Subject:      pkix.Name{CommonName: spec.cn, Organization: spec.orgs},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(365 * 24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
			ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
			DNSNames:     spec.dns,
			IPAddresses:  spec.ips,
		}
		if spec.server {
			tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return fmt.Errorf("certificate %s: %w", spec.file, err)
		}
		if err := writePair(dir, spec.file, der, key); err != nil {
			return err
		}
	}
	// Service-account tokens are signed with RSA (RS256, what every client expects).
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, "sa.pub"), "PUBLIC KEY", pub); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, "sa.key"), "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(saKey))
}

func writePair(dir, name string, der []byte, key *ecdsa.PrivateKey) error {
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, name+".crt"), "CERTIFICATE", der); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, name+".key"), "EC PRIVATE KEY", keyDER)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
