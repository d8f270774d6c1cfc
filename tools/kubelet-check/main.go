// kubelet-check runs the kubelet's own code on a KubeletConfiguration file for a NUMA
// machine described on the command line, up to the point where the kubelet would start
// its CPU and Memory Managers, and prints one line per step: "ok" or the kubelet's error.
//
//	kubelet-check --config kubelet-config.yaml \
//	    --node 0:16Gi:0-5,12-17 --node 1:16Gi:6-11,18-23 --threads-per-core 2
//
// A node is ID:MEMORY:CPUS[:SOCKET]. CPUS is a CPU list grouped into cores of
// --threads-per-core threads the way Linux numbers them (the node's i-th CPU of each
// consecutive block shares a core: 0-5,12-17 with two threads is 0+12, 1+13, ...), or the
// cores themselves, comma-separated, each its threads joined by '+' (0+12,1+13,...).
// SOCKET defaults to the node's ID.
//
// Steps, each as the kubelet runs it (cmd/kubelet/app, pkg/kubelet/cm):
//
//	validation     pkg/kubelet/apis/config/validation.ValidateKubeletConfiguration
//	memorymanager  memorymanager.NewManager (validateReservedMemory for the Static policy)
//	cpumanager     cpumanager.NewManager (NewStaticPolicy for the static policy)
//
// The exit code is 0 when every step is ok, 1 when the kubelet refused one, 2 on bad usage.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	cadvisorapi "github.com/google/cadvisor/info/v1"
	"github.com/opencontainers/cgroups"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	"k8s.io/utils/cpuset"

	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	kubeletscheme "k8s.io/kubernetes/pkg/kubelet/apis/config/scheme"
	"k8s.io/kubernetes/pkg/kubelet/apis/config/validation"
	"k8s.io/kubernetes/pkg/kubelet/cadvisor"
	"k8s.io/kubernetes/pkg/kubelet/cm/cpumanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/memorymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/eviction"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
	"k8s.io/kubernetes/pkg/kubelet/kubeletconfig/util/codec"
)

type nodeFlags []string

func (n *nodeFlags) String() string     { return strings.Join(*n, " ") }
func (n *nodeFlags) Set(v string) error { *n = append(*n, v); return nil }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	klog.SetLogger(logr.Discard()) // the managers' info logs: each step's outcome is printed below
	flags := flag.NewFlagSet("kubelet-check", flag.ContinueOnError)
	flags.SetOutput(stderr)
	config := flags.String("config", "", "the KubeletConfiguration file (kubelet.config.k8s.io/v1beta1)")
	threads := flags.Int("threads-per-core", 1, "hardware threads per core, for CPU lists given as ranges")
	var nodes nodeFlags
	flags.Var(&nodes, "node", "a NUMA node, ID:MEMORY:CPUS[:SOCKET] (repeat for each)")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if *config == "" || len(nodes) == 0 {
		fmt.Fprintln(stderr, "kubelet-check: --config and at least one --node are needed")
		return 2
	}
	machine, err := machineInfo(nodes, *threads)
	if err != nil {
		fmt.Fprintf(stderr, "kubelet-check: %v\n", err)
		return 2
	}
	data, err := os.ReadFile(*config)
	if err != nil {
		fmt.Fprintf(stderr, "kubelet-check: %v\n", err)
		return 2
	}
	failed := false
	report := func(step string, err error) {
		if err != nil {
			failed = true
			fmt.Fprintf(stdout, "%s: %v\n", step, err)
		} else {
			fmt.Fprintf(stdout, "%s: ok\n", step)
		}
	}

	// the kubelet's config file loader: its scheme, strict first, defaults applied, internal type
	_, codecs, err := kubeletscheme.NewSchemeAndCodecs(serializer.EnableStrict)
	if err != nil {
		report("decode", err)
		return 1
	}
	kc, err := codec.DecodeKubeletConfiguration(context.Background(), codecs, data)
	if err != nil {
		report("decode", err)
		return 1
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(kc.FeatureGates); err != nil {
		report("feature gates", err)
		return 1
	}

	// ValidateKubeletConfiguration also looks at the host it runs on: with failCgroupV1 (the
	// default) it refuses a cgroup v1 host. That is this checker's host, not the node the file
	// is for, so on a cgroup v1 host the check assumes a cgroup v2 node, and says so.
	validated := *kc
	note := ""
	if kc.FailCgroupV1 && !cgroups.IsCgroup2UnifiedMode() {
		validated.FailCgroupV1 = false
		note = " (this host runs cgroup v1: checked as for a cgroup v2 node)"
	}
	if err := validation.ValidateKubeletConfiguration(&validated, utilfeature.DefaultFeatureGate); err != nil {
		report("validation", err)
	} else {
		fmt.Fprintf(stdout, "validation: ok%s\n", note)
	}

	logger := logr.Discard()
	affinity, err := topologymanager.NewManager(machine.Topology, kc.TopologyManagerPolicy,
		kc.TopologyManagerScope, kc.TopologyManagerPolicyOptions)
	if err != nil {
		report("topologymanager", err)
		return 1
	}
	reservedCPUs, reservation, err := reservation(kc, machine)
	if err != nil {
		report("reservation", err)
		return 1
	}
	state, err := os.MkdirTemp("", "kubelet-check-")
	if err != nil {
		fmt.Fprintf(stderr, "kubelet-check: %v\n", err)
		return 2
	}
	defer os.RemoveAll(state)

	_, err = memorymanager.NewManager(logger, kc.MemoryManagerPolicy, machine, reservation,
		kc.ReservedMemory, state, affinity)
	report("memorymanager", err)

	_, err = cpumanager.NewManager(logger, kc.CPUManagerPolicy, kc.CPUManagerPolicyOptions,
		kc.CPUManagerReconcilePeriod.Duration, machine, reservedCPUs, reservation, state, affinity)
	report("cpumanager", err)

	if failed {
		return 1
	}
	return 0
}

// reservation is the node allocatable reservation the kubelet hands its managers, computed
// as cmd/kubelet/app (run: reservedSystemCPUs overrides the CPU of kubeReserved and
// systemReserved; the hard eviction thresholds) and pkg/kubelet/cm
// (GetNodeAllocatableReservation, hardEvictionReservation) do.
func reservation(kc *kubeletconfig.KubeletConfiguration, machine *cadvisorapi.MachineInfo) (cpuset.CPUSet, v1.ResourceList, error) {
	reservedCPUs := cpuset.New()
	if kc.ReservedSystemCPUs != "" {
		var err error
		if reservedCPUs, err = cpuset.Parse(kc.ReservedSystemCPUs); err != nil {
			return reservedCPUs, nil, fmt.Errorf("unable to parse reserved-cpus list: %s", err)
		}
	}
	kubeReserved := copyMap(kc.KubeReserved)
	systemReserved := copyMap(kc.SystemReserved)
	if reservedCPUs.Size() > 0 {
		delete(kubeReserved, "cpu")
		systemReserved["cpu"] = strconv.Itoa(reservedCPUs.Size())
	}
	kube, err := parseResourceList(kubeReserved)
	if err != nil {
		return reservedCPUs, nil, fmt.Errorf("--kube-reserved value failed to parse: %w", err)
	}
	system, err := parseResourceList(systemReserved)
	if err != nil {
		return reservedCPUs, nil, fmt.Errorf("--system-reserved value failed to parse: %w", err)
	}
	// (the kubelet skips them only under --experimental-allocatable-ignore-eviction, a flag)
	thresholds, err := eviction.ParseThresholdConfig([]string{}, kc.EvictionHard, nil, nil, nil)
	if err != nil {
		return reservedCPUs, nil, err
	}
	capacity := cadvisor.CapacityFromMachineInfo(machine)
	evicted := v1.ResourceList{}
	for _, threshold := range thresholds {
		if threshold.Operator != evictionapi.OpLessThan {
			continue
		}
		if threshold.Signal == evictionapi.SignalMemoryAvailable {
			memory := capacity[v1.ResourceMemory]
			evicted[v1.ResourceMemory] = *evictionapi.GetThresholdQuantity(threshold.Value, &memory)
		}
	}
	result := v1.ResourceList{}
	for k := range capacity {
		value := resource.NewQuantity(0, resource.DecimalSI)
		value.Add(system[k])
		value.Add(kube[k])
		value.Add(evicted[k])
		if !value.IsZero() {
			result[k] = *value
		}
	}
	return reservedCPUs, result, nil
}

// parseResourceList is cmd/kubelet/app's, which is not exported.
func parseResourceList(m map[string]string) (v1.ResourceList, error) {
	rl := v1.ResourceList{}
	for k, v := range m {
		switch v1.ResourceName(k) {
		case v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage, "pid":
			q, err := resource.ParseQuantity(v)
			if err != nil {
				return nil, fmt.Errorf("failed to parse quantity %q for %q resource: %w", v, k, err)
			}
			if q.Sign() == -1 {
				return nil, fmt.Errorf("resource quantity for %q cannot be negative: %v", k, v)
			}
			rl[v1.ResourceName(k)] = q
		default:
			return nil, fmt.Errorf("cannot reserve %q resource", k)
		}
	}
	return rl, nil
}

func copyMap(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// machineInfo is what cAdvisor would report for the nodes given.
func machineInfo(specs []string, threads int) (*cadvisorapi.MachineInfo, error) {
	if threads < 1 {
		return nil, fmt.Errorf("--threads-per-core must be at least 1")
	}
	machine := &cadvisorapi.MachineInfo{Timestamp: time.Now()}
	sockets := map[int]bool{}
	for _, spec := range specs {
		parts := strings.Split(spec, ":")
		if len(parts) != 3 && len(parts) != 4 {
			return nil, fmt.Errorf("--node %q: want ID:MEMORY:CPUS[:SOCKET]", spec)
		}
		id, err := strconv.Atoi(parts[0])
		if err != nil {
			return nil, fmt.Errorf("--node %q: node ID: %v", spec, err)
		}
		memory, err := resource.ParseQuantity(parts[1])
		if err != nil {
			return nil, fmt.Errorf("--node %q: memory: %v", spec, err)
		}
		socket := id
		if len(parts) == 4 {
			if socket, err = strconv.Atoi(parts[3]); err != nil {
				return nil, fmt.Errorf("--node %q: socket: %v", spec, err)
			}
		}
		cores, err := coresOf(parts[2], threads)
		if err != nil {
			return nil, fmt.Errorf("--node %q: %v", spec, err)
		}
		node := cadvisorapi.Node{Id: id, Memory: uint64(memory.Value())}
		for _, core := range cores {
			node.Cores = append(node.Cores, cadvisorapi.Core{Id: core[0], Threads: core, SocketID: socket})
			machine.NumCores += len(core)
		}
		machine.NumPhysicalCores += len(cores)
		machine.MemoryCapacity += node.Memory
		sockets[socket] = true
		machine.Topology = append(machine.Topology, node)
	}
	machine.NumSockets = len(sockets)
	sort.Slice(machine.Topology, func(i, j int) bool { return machine.Topology[i].Id < machine.Topology[j].Id })
	return machine, nil
}

// coresOf groups a node's CPUs into cores: explicit (0+12,1+13) or by threads per core.
func coresOf(list string, threads int) ([][]int, error) {
	var cores [][]int
	if strings.Contains(list, "+") {
		for _, core := range strings.Split(list, ",") {
			var cpus []int
			for _, cpu := range strings.Split(core, "+") {
				n, err := strconv.Atoi(cpu)
				if err != nil {
					return nil, fmt.Errorf("core %q: %v", core, err)
				}
				cpus = append(cpus, n)
			}
			cores = append(cores, cpus)
		}
		return cores, nil
	}
	set, err := cpuset.Parse(list)
	if err != nil {
		return nil, err
	}
	cpus := set.List()
	if len(cpus)%threads != 0 {
		return nil, fmt.Errorf("%d CPUs are not whole cores of %d threads", len(cpus), threads)
	}
	per := len(cpus) / threads
	for i := 0; i < per; i++ {
		var core []int
		for t := 0; t < threads; t++ {
			core = append(core, cpus[t*per+i])
		}
		cores = append(cores, core)
	}
	return cores, nil
}
