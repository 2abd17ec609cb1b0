// Package defaults fills in the settings a caller left out, the one way every Config and Options
// of the project does it.
package defaults

import "cmp"

// Zero sets *v to d when *v is its type's zero value (left out).
func Zero[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}

// Positive sets *v to d when *v is not positive (left out, or a negative that means nothing).
func Positive[T cmp.Ordered](v *T, d T) {
	var zero T
	if *v <= zero {
		*v = d
	}
}
