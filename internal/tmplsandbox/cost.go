package tmplsandbox

import "reflect"

// Template functions that generate keys or hash passwords take a core
// for a tenth of a second to seconds a call; counted as one step each,
// a few hundred calls would burn a core until the deadline, and Helm's
// own engine (which cannot be stopped) would repeat them. Their calls are
// counted by cost instead, within Limits.Cost per rendering.

// funcCost is the cost of a call of the template function name with args
// (sprig's), in tenths of a second of a core, about: an RSA key of 2048
// bits costs 2 (genCA, genSelfSignedCert, genSignedCert make one), one of
// 4096 bits (genPrivateKey "rsa") 8, a DSA key 20, a bcrypt hash 1,
// derivePassword (scrypt) 3; signing with a given key or an ECDSA or
// Ed25519 key 1. Other functions cost 0.
func funcCost(name string, args []reflect.Value) int {
	switch name {
	case "genPrivateKey":
		if len(args) == 1 && args[0].Kind() == reflect.String {
			switch args[0].String() {
			case "rsa":
				return 8
			case "dsa":
				return 20
			}
		}
		return 1
	case "genCA", "genSelfSignedCert", "genSignedCert":
		return 2
	case "derivePassword":
		return 3
	case "genCAWithKey", "genSelfSignedCertWithKey", "genSignedCertWithKey", "bcrypt", "htpasswd":
		return 1
	}
	return 0
}
