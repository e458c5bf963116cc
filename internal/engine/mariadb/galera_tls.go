package mariadb

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/calibra-bench/calibra/internal/engine/server"
)

// A Galera node's group communication (and IST, which Galera 4 runs over
// the same TLS settings) is TLS with a certificate of the cluster's own
// private CA, which both ends must present: a server calibra did not
// start holds no such certificate and is refused at the handshake. The
// CA is made at each start of the cluster and its key is dropped once the
// nodes' certificates are signed, so no later certificate can be made.

// Files a node reads from its private socket directory (0700, the server
// account's), each 0600: its option file and its TLS material. None is
// named on a command line but the option file, whose path says nothing.
const (
	optionFileName = "calibra-galera.cnf"
	caFileName     = "galera-ca.pem"
	certFileName   = "galera-node.pem"
	keyFileName    = "galera-node.key"
)

// secretsDir stands, in a node's provider options, for its socket
// directory, which exists only once the node starts.
const secretsDir = "@CALIBRA_SECRETS@"

// nodeTLS is one node's certificate and key, and the CA that signs every
// node's, in PEM.
type nodeTLS struct{ ca, cert, key []byte }

// newClusterTLS makes a private CA and a certificate for each of n nodes.
func newClusterTLS(n int) ([]nodeTLS, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := certTemplate("calibra Galera cluster CA")
	caTmpl.IsCA, caTmpl.BasicConstraintsValid = true, true
	caTmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	out := make([]nodeTLS, n)
	for i := range out {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		tmpl := certTemplate(fmt.Sprintf("calibra Galera node %d", i+1))
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			return nil, err
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return nil, err
		}
		out[i] = nodeTLS{ca: caPEM,
			cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			key:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})}
	}
	return out, nil
}

func certTemplate(name string) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	now := time.Now()
	return &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: name},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(1, 0, 0)}
}

// tlsOptions are the provider options that make a node talk TLS only,
// with its files in its socket directory.
func tlsOptions() string {
	f := func(name string) string { return secretsDir + "/" + name }
	return "socket.ssl=YES;socket.dynamic=NO;socket.ssl_ca=" + f(caFileName) +
		";socket.ssl_cert=" + f(certFileName) + ";socket.ssl_key=" + f(keyFileName)
}

// files are the node's TLS material, by file name.
func (t nodeTLS) files() map[string][]byte {
	return map[string][]byte{caFileName: t.ca, certFileName: t.cert, keyFileName: t.key}
}

// optionFile holds a Galera node's wsrep settings (the cluster's name and
// addresses, where its TLS files are), kept off the command line that
// any account can read in ps.
func (in *Instance) optionFile(dir string) []byte {
	settings := in.Settings()
	keys := make([]string, 0, len(in.wsrep))
	for k := range in.wsrep {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("# calibra's Galera node settings (docs/security.md)\n[mariadbd]\n")
	for _, k := range keys {
		v := strings.ReplaceAll(settings[k], secretsDir, dir)
		fmt.Fprintf(&b, "%s=\"%s\"\n", k, optionEscaper.Replace(v))
	}
	return []byte(b.String())
}

var optionEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

// writeSecrets writes the node's option file and TLS files into dir (its
// socket directory), each 0600 and the server account's.
func (in *Instance) writeSecrets(dir string) error {
	files := map[string][]byte{optionFileName: in.optionFile(dir), sstScriptName: []byte(sstScript)}
	for name, b := range in.secrets {
		files[name] = b
	}
	for name, b := range files {
		mode := os.FileMode(0o600)
		if name == sstScriptName {
			mode = 0o700
		}
		if err := writePrivate(in, filepath.Join(dir, name), b, mode); err != nil {
			return fmt.Errorf("write the Galera node's %s: %w", name, err)
		}
	}
	return nil
}

// clusterNameFile keeps a cluster's random name in each node's data
// directory, so that a later start (another calibra) finds it.
const clusterNameFile = "calibra-galera-name"

// Galera's group names are at most 32 bytes: calibra- and 80 random bits.
var clusterNameRE = regexp.MustCompile(`^calibra-[0-9a-f]{20}$`)

// clusterName is the cluster's name as a node recorded it, or a new
// random one: another account cannot guess it to name it in its own
// node's settings (the TLS, not the name, is what refuses it).
func (c *Cluster) clusterName() (string, error) {
	for _, t := range c.nodes {
		b, err := server.ReadSmall(filepath.Join(t.Managed.DataDir, clusterNameFile))
		if name := strings.TrimSpace(string(b)); err == nil && clusterNameRE.MatchString(name) {
			return name, nil
		}
	}
	r := make([]byte, 10)
	if _, err := rand.Read(r); err != nil {
		return "", err
	}
	return "calibra-" + hex.EncodeToString(r), nil
}

// keepName records the name in every node's data directory that exists.
func (c *Cluster) keepName(name string) error {
	for _, t := range c.nodes {
		if _, err := os.Lstat(t.Managed.DataDir); err != nil {
			continue
		}
		if err := writePrivate(t.Managed, filepath.Join(t.Managed.DataDir, clusterNameFile), []byte(name+"\n"), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// writePrivate writes a file of the server account's, made anew: what is
// at the name is unlinked, never followed, and the file made with
// O_EXCL|O_NOFOLLOW and given to the account by handle
// (server.Account.WriteFile).
func writePrivate(in *Instance, p string, b []byte, mode os.FileMode) error {
	return in.Account.WriteFile(p, b, mode)
}

// removeSecrets removes what writeSecrets wrote into dir.
func (in *Instance) removeSecrets(dir string) {
	names := []string{optionFileName, sstScriptName}
	for name := range in.secrets {
		names = append(names, name)
	}
	for _, name := range names {
		_ = os.Remove(filepath.Join(dir, name)) // safefs: unlinks the name (never follows it) in a directory whose parent only calibra can change
	}
}
