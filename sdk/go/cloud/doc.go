// Look up and manage the IAM policies of Google Cloud Endpoints / Service Management services and of their consumer projects.
package cloud
