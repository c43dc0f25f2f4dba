package tmplsandbox

import (
	"reflect"
	"testing"
)

func TestFuncCost(t *testing.T) {
	str := func(s string) []reflect.Value { return []reflect.Value{reflect.ValueOf(s)} }
	cases := []struct {
		name string
		args []reflect.Value
		want int
	}{
		{"genPrivateKey", str("rsa"), 8},
		{"genPrivateKey", str("dsa"), 20},
		{"genPrivateKey", str("ecdsa"), 1},
		{"genPrivateKey", str("ed25519"), 1},
		{"genCA", nil, 2},
		{"genSelfSignedCert", nil, 2},
		{"genSignedCert", nil, 2},
		{"genCAWithKey", nil, 1},
		{"genSignedCertWithKey", nil, 1},
		{"bcrypt", str("x"), 1},
		{"htpasswd", nil, 1},
		{"derivePassword", nil, 3},
		{"upper", str("x"), 0},
		{"encryptAES", nil, 0},
	}
	for _, tc := range cases {
		if got := funcCost(tc.name, tc.args); got != tc.want {
			t.Errorf("funcCost(%s %v) = %d, want %d", tc.name, tc.args, got, tc.want)
		}
	}
}
