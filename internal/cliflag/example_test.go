package cliflag_test

import (
	"flag"
	"fmt"

	"github.com/vitgo/vit/internal/cliflag"
)

func ExampleStrings() {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	var sets cliflag.Strings
	fs.Var(&sets, "set", "key=value override (repeatable)")
	if err := fs.Parse([]string{"-set", "train.epochs=2", "-set", "optim.lr=1e-3"}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(sets), sets[0], sets[1])
	fmt.Println(sets.String())
	// Output:
	// 2 train.epochs=2 optim.lr=1e-3
	// train.epochs=2,optim.lr=1e-3
}
