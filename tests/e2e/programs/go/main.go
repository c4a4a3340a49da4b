// Command goprogram runs a Pulumi program written in Go against the real engine (the pinned pulumi CLI, found
// on PATH) through the Automation API, with the program inline. The program does one lookup with the generated
// Go SDK, in both forms (LookupServiceIamPolicy and LookupServiceIamPolicyOutput), and exports the results.
//
// Usage: goprogram -work DIR -stack NAME -service S [-destroy]
// Provider configuration comes from the stack's config (cloud:serviceManagementCustomEndpoint, secret
// cloud:accessToken), which the caller sets with `pulumi config set` in DIR beforehand. Prints the stack
// outputs as JSON on the last line of stdout.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"example.com/pulumi-cloud/sdk/go/v8/cloud/endpoints"
	"example.com/pulumi-cloud/sdk/go/v8/cloud/organizations"
	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optdestroy"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optup"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

func program(service string) pulumi.RunFunc {
	return func(ctx *pulumi.Context) error {
		direct, err := endpoints.LookupServiceIamPolicy(ctx, &endpoints.LookupServiceIamPolicyArgs{ServiceName: service})
		if err != nil {
			return err
		}
		ctx.Export("directId", pulumi.String(direct.Id))
		ctx.Export("directEtag", pulumi.String(direct.Etag))
		ctx.Export("directPolicyData", pulumi.String(direct.PolicyData))

		out := endpoints.LookupServiceIamPolicyOutput(ctx, endpoints.LookupServiceIamPolicyOutputArgs{
			ServiceName: pulumi.String(service),
		})
		ctx.Export("outputId", out.Id())
		// The members of one role, from the structured bindings (no JSON parsing).
		ctx.Export("consumers", out.Bindings().ApplyT(func(bs []organizations.GetIAMPolicyBinding) []string {
			members := []string{}
			for _, b := range bs {
				if b.Role == "roles/servicemanagement.serviceConsumer" {
					members = append(members, b.Members...)
				}
			}
			return members
		}).(pulumi.StringArrayOutput))
		return nil
	}
}

func run() error {
	work := flag.String("work", "", "the project directory (Pulumi.yaml and stack config)")
	stackName := flag.String("stack", "dev", "stack name")
	service := flag.String("service", "", "the service to look up")
	destroy := flag.Bool("destroy", false, "destroy the stack instead of updating it")
	flag.Parse()
	ctx := context.Background()

	ws, err := auto.NewLocalWorkspace(ctx, auto.WorkDir(*work), auto.Program(program(*service)))
	if err != nil {
		return err
	}
	stack, err := auto.UpsertStack(ctx, *stackName, ws)
	if err != nil {
		return err
	}
	if *destroy {
		_, err = stack.Destroy(ctx, optdestroy.ProgressStreams(os.Stderr))
		return err
	}
	res, err := stack.Up(ctx, optup.ProgressStreams(os.Stderr))
	if err != nil {
		return err
	}
	outputs := map[string]any{}
	for k, v := range res.Outputs {
		outputs[k] = map[string]any{"value": v.Value, "secret": v.Secret}
	}
	b, err := json.Marshal(outputs)
	if err != nil {
		return err
	}
	fmt.Println(string(b))
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
