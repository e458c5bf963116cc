package secret

import "testing"

func TestIsDSN(t *testing.T) {
	for s, want := range map[string]bool{
		"postgres://calibra:pw@db.invalid/bench":            true,
		"mysql://root@127.0.0.1:3306/bench?tls=true":        true,
		"host=/run/postgresql user=calibra dbname=bench":    true,
		"host = localhost password='it''s secret' dbname=x": false, // libpq escapes with a backslash
		"password='a b\\' c' dbname=x":                      true,
		"ghp_0123456789abcdefTOKEN":                         false,
		"root:$6$hash:19000:0:99999:7:::":                   false,
		"-----BEGIN OPENSSH PRIVATE KEY-----":               false,
		"PATH=/usr/bin\x00HOME=/root":                       false,
		"sqlite:/var/lib/calibra/results.db":                false,
	} {
		if got := IsDSN(s); got != want {
			t.Errorf("IsDSN(%q) = %v, want %v", s, got, want)
		}
	}
}
