fn main() {
    tokenpipe_cli::run("sweep", tokenpipe_sweep::main)
}
