package openstacktest

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// serverAction serves POST /servers/{id}/action: power actions and the console log. Each body
// names exactly one action, as in Nova.
func (s *Sim) serverAction(w http.ResponseWriter, r *http.Request) {
	var body map[string]json.RawMessage
	if !decodeOrFail(w, r, serviceCompute, &body) {
		return
	}
	if len(body) != 1 {
		writeError(w, serviceCompute, errf(400, "Malformed request body: exactly one action is expected, got %d", len(body)))
		return
	}
	for action, raw := range body {
		switch action {
		case "os-stop":
			s.powerAction(w, r, action, PowerOff)
		case "os-start":
			s.powerAction(w, r, action, PowerOn)
		case "reboot":
			var req struct {
				Type string `json:"type"`
			}
			if err := json.Unmarshal(raw, &req); err != nil {
				writeError(w, serviceCompute, errf(400, "Invalid input for field/attribute reboot: %v", err))
				return
			}
			switch strings.ToUpper(req.Type) {
			case "SOFT":
				s.powerAction(w, r, action, SoftReboot)
			case "HARD":
				s.powerAction(w, r, action, HardReboot)
			default:
				writeError(w, serviceCompute, errf(400, "Invalid input for field/attribute type. Value: %s. '%s' is not one of ['HARD', 'Hard', 'SOFT', 'Soft', 'hard', 'soft']", req.Type, req.Type))
			}
		case "os-getConsoleOutput":
			s.consoleOutput(w, r, raw)
		default:
			writeError(w, serviceCompute, errf(400, "There is no such action: %s", action))
		}
	}
}

// powerRule is what a power action needs and does: the vm_states it may start from, the
// transitional status and task_state while it runs, and the status it ends in.
type powerRule struct {
	from              []string
	during, task, end string
}

var powerRules = map[PowerAction]powerRule{
	PowerOff:   {from: []string{"active", "error"}, during: "", task: "powering-off", end: "SHUTOFF"},
	PowerOn:    {from: []string{"stopped"}, during: "", task: "powering-on", end: "ACTIVE"},
	SoftReboot: {from: []string{"active"}, during: "REBOOT", task: "rebooting", end: "ACTIVE"},
	HardReboot: {from: []string{"active", "stopped", "error"}, during: "HARD_REBOOT", task: "rebooting_hard", end: "ACTIVE"},
}

// powerAction accepts a power action (202) and carries it out in the background: the hypervisor
// acts on the machine, then the server takes its new status, or ERROR if the machine failed.
func (s *Sim) powerAction(w http.ResponseWriter, r *http.Request, name string, a PowerAction) {
	rule := powerRules[a]
	s.mu.Lock()
	srv, e := s.serverByID(r.PathValue("id"))
	if e == nil {
		vm, task, _ := vmState(srv)
		switch {
		case task != nil:
			e = errf(409, "Cannot '%s' instance %s while it is in task_state %v", name, srv.ID, task)
		case !slices.Contains(rule.from, vm):
			e = errf(409, "Cannot '%s' instance %s while it is in vm_state %s", name, srv.ID, vm)
		}
	}
	if e != nil {
		s.mu.Unlock()
		writeError(w, serviceCompute, e)
		return
	}
	if rule.during != "" {
		srv.Status = rule.during
	}
	srv.TaskState, srv.Updated = rule.task, time.Now()
	id := srv.ID
	s.mu.Unlock()
	s.after(0, func() { s.finishPower(id, a) })
	w.WriteHeader(http.StatusAccepted)
}

func (s *Sim) finishPower(id string, a PowerAction) {
	unlock := s.serverOp(id)
	defer unlock()
	var err error
	if hv := s.opts.Hypervisor; hv != nil {
		err = hv.Power(s.ctx, id, a)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	srv, ok := s.st.servers[id]
	if !ok || srv.TaskState != powerRules[a].task {
		return // deleted meanwhile, or a delete took over
	}
	srv.TaskState, srv.Updated = "", time.Now()
	if err != nil {
		srv.Status, srv.Fault = "ERROR", string(a)+": "+err.Error()
		return
	}
	srv.Status = powerRules[a].end
}

// consoleOutput answers os-getConsoleOutput: the last length lines of the machine's console
// (all of it for null or -1). Without a hypervisor there is no console, so the output is empty.
func (s *Sim) consoleOutput(w http.ResponseWriter, r *http.Request, raw json.RawMessage) {
	var req struct {
		Length any `json:"length"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		writeError(w, serviceCompute, errf(400, "Invalid input for field/attribute os-getConsoleOutput: %v", err))
		return
	}
	lines := -1
	switch v := req.Length.(type) {
	case nil:
	case float64:
		lines = int(v)
		if float64(lines) != v {
			lines = -2
		}
	case string:
		n, err := strconv.Atoi(v)
		if err != nil {
			n = -2
		}
		lines = n
	default:
		lines = -2
	}
	if lines < -1 {
		writeError(w, serviceCompute, errf(400, "Invalid input for field/attribute length. Value: %v. Expected an integer of -1 or more, or null", req.Length))
		return
	}
	s.mu.Lock()
	srv, e := s.serverByID(r.PathValue("id"))
	var id string
	if e == nil {
		id = srv.ID
		if srv.Status == "BUILD" {
			e = errf(409, "Instance %s is not ready", id)
		}
	}
	s.mu.Unlock()
	if e != nil {
		writeError(w, serviceCompute, e)
		return
	}
	out := ""
	if hv := s.opts.Hypervisor; hv != nil && lines != 0 {
		var err error
		if out, err = hv.Console(r.Context(), id, lines); err != nil {
			writeError(w, serviceCompute, errf(500, "Unexpected error reading the console of %s: %v", id, err))
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"output": out})
}
