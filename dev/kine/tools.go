//go:build tools

// Pins kine's version in go.mod; build.sh builds its main package from the module cache.
package tools

import _ "github.com/k3s-io/kine"
