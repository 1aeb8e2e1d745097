package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"lockbench/internal/redistest"
)

// writeCert signs a certificate for 127.0.0.1 (or a client) with ca, or
// self-signs when ca is nil, and writes PEM files; it returns the parsed
// certificate and key for signing others.
func writeCert(t *testing.T, dir, name string, isCA bool, ca *x509.Certificate, caKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "lockbench-test-" + name},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IsCA:        isCA, BasicConstraintsValid: true,
	}
	parent, signer := tmpl, key
	if ca != nil {
		parent, signer = ca, caKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	_ = os.WriteFile(filepath.Join(dir, name+".crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(filepath.Join(dir, name+".key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	return cert, key
}

// A redis-server that speaks only TLS and requires client certificates:
// rediss:// with --tls-ca/--tls-cert/--tls-key works, without a client
// certificate it is a clear error naming the master.
func TestTLSMasters(t *testing.T) {
	bin := redistest.Require(t)
	dir := t.TempDir()
	ca, caKey := writeCert(t, dir, "ca", true, nil, nil)
	writeCert(t, dir, "server", false, ca, caKey)
	writeCert(t, dir, "client", false, ca, caKey)
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	srv := exec.Command(bin, "--port", "0", "--tls-port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--tls-cert-file", filepath.Join(dir, "server.crt"), "--tls-key-file", filepath.Join(dir, "server.key"),
		"--tls-ca-cert-file", filepath.Join(dir, "ca.crt"), "--tls-auth-clients", "yes",
		"--save", "", "--appendonly", "no", "--dir", dir)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	pair, _ := tls.LoadX509KeyPair(filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key"))
	for i := 0; ; i++ {
		c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}})
		if err == nil {
			c.Close()
			break
		}
		if i > 50 {
			t.Fatalf("TLS redis-server did not come up: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	url := "rediss://" + addr
	base := []string{"run", "--masters", url, "--duration", "500ms", "--warmup", "0s", "--workers", "2"}
	_, stderr, code := lockbench(t, append(base, "--tls-ca", filepath.Join(dir, "ca.crt"),
		"--tls-cert", filepath.Join(dir, "client.crt"), "--tls-key", filepath.Join(dir, "client.key"))...)
	if code != 0 {
		t.Fatalf("rediss with CA and client cert: exit %d %s", code, stderr)
	}
	_, stderr, code = lockbench(t, append(base, "--tls-insecure",
		"--tls-cert", filepath.Join(dir, "client.crt"), "--tls-key", filepath.Join(dir, "client.key"))...)
	if code != 0 {
		t.Fatalf("rediss with --tls-insecure: exit %d %s", code, stderr)
	}
	_, stderr, code = lockbench(t, append(base, "--tls-ca", filepath.Join(dir, "ca.crt"))...)
	if code != 1 || !strings.Contains(stderr, addr) {
		t.Fatalf("rediss without the client certificate: exit %d %q; want 1 naming %s", code, stderr, addr)
	}
}
