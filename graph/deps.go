package graph

import (
	_ "go4.org/unsafe/assume-no-moving-gc"
	_ "gorgonia.org/gorgonia"
	_ "gorgonia.org/tensor"
)
