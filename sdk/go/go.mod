module example.com/pulumi-cloud/sdk/go/v8

go 1.25

require github.com/pulumi/pulumi/sdk/v3 v3.30.0
