// Package tlsfiles loads a TLS client's files (--tls-ca, --tls-cert,
// --tls-key, --tls-insecure) for any lock service's client.
package tlsfiles

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// Files are the files and switches for a TLS client (rediss:// masters,
// a service's https:// servers).
type Files struct {
	CA       string // PEM bundle to verify the servers; empty: system roots
	Cert     string // client certificate (PEM), with Key, for mutual TLS
	Key      string
	Insecure bool // skip server certificate verification (test setups only)
}

// Empty says no TLS setting was given.
func (t Files) Empty() bool { return t == Files{} }

// Config loads the files into a tls.Config for serverName. Errors name the
// flag and the file.
func (t Files) Config(serverName string) (*tls.Config, error) {
	c := &tls.Config{ServerName: serverName, MinVersion: tls.VersionTLS12, InsecureSkipVerify: t.Insecure}
	if t.CA != "" {
		pem, err := os.ReadFile(t.CA)
		if err != nil {
			return nil, fmt.Errorf("tls-ca: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls-ca: %s holds no PEM certificate", t.CA)
		}
		c.RootCAs = pool
	}
	if (t.Cert == "") != (t.Key == "") {
		return nil, fmt.Errorf("tls-cert: give both --tls-cert and --tls-key for a client certificate, or neither")
	}
	if t.Cert != "" {
		pair, err := tls.LoadX509KeyPair(t.Cert, t.Key)
		if err != nil {
			return nil, fmt.Errorf("tls-cert: %s / %s: %v", t.Cert, t.Key, err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}
