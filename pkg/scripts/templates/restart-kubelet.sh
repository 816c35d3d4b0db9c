quiet systemctl daemon-reload
quiet systemctl restart kubelet
changed "restarted the kubelet"
wait_for 60 "the kubelet to be active after its restart" systemctl is-active --quiet kubelet
