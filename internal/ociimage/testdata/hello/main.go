// Command hello is the stand-in binary of the image tests. It resolves a
// host name so that a cgo build links the C resolver (a dynamic binary).
package main

import (
	"fmt"
	"net"
)

func main() {
	addrs, err := net.LookupHost("localhost")
	fmt.Println(addrs, err)
}
